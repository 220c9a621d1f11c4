-- The ledger's balance check, once per movement instead of once per row (issue 22: the commit of an intake
-- batch ran two aggregate queries for the transaction row and for each of its entries, six per movement).
--  - An entry whose ledger transaction was written by this same database transaction (not a savepoint's:
--    its rows carry the subtransaction's id) is checked by that transaction's own deferred check, which sees
--    every entry at commit: its own check returns at once (one lookup by primary key).
--  - Any other entry (added to an earlier transaction, or under a savepoint) is checked in full, as before.
--  - The check itself is one query: the number of legs and each currency's sum together.
-- The rules are unchanged: every transaction has two sides at least and balances per currency, at commit.
CREATE OR REPLACE FUNCTION cardpull_ledger_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tx bigint;
  legs int := 0;
  off_currency text;
  off_total numeric;
  r record;
BEGIN
  -- (Each branch is planned only when it runs: the other table's row has no such field.)
  IF TG_TABLE_NAME = 'ledger_entries' THEN
    tx := NEW.transaction_id;
    PERFORM 1 FROM "ledger_transactions" WHERE id = tx AND xmin = pg_current_xact_id()::xid;
    IF FOUND THEN RETURN NULL; END IF;
  ELSE
    tx := NEW.id;
  END IF;
  FOR r IN SELECT currency, count(*)::int AS n, sum(amount) AS total FROM "ledger_entries" WHERE transaction_id = tx GROUP BY currency LOOP
    legs := legs + r.n;
    IF r.total <> 0 AND off_currency IS NULL THEN off_currency := r.currency; off_total := r.total; END IF;
  END LOOP;
  IF legs < 2 THEN
    RAISE EXCEPTION 'ledger transaction % has % entries: a movement of money has two sides at least', tx, legs
      USING ERRCODE = 'check_violation';
  END IF;
  IF off_currency IS NOT NULL THEN
    RAISE EXCEPTION 'ledger transaction % does not balance: its % entries sum to %', tx, off_currency, off_total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;

-- And one index less to write for every entry: (partner_account, account) served only the balances, which
-- sum every entry of the one partner account a deployment has (a scan either way).
DROP INDEX "ledger_entries_partner_account_account_idx";
