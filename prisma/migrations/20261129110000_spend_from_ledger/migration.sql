-- The spend guard reads a client's reservations of the day from the ledger (issue 24) instead of its own
-- counter: the accepted movements carry the order's client, and a partial index holds only those.

-- AlterTable
ALTER TABLE "ledger_transactions" ADD COLUMN     "client" TEXT;

-- DropTable (the counter it replaces: what it counted is in the ledger)
DROP TABLE "client_spend";

-- CreateIndex (partial: only the accepted movements, the ones the guard sums)
CREATE INDEX "ledger_transactions_client_created_at_idx" ON "ledger_transactions"("client", "created_at") WHERE kind = 'accepted';

-- Accepted: float to reserved, at the order's cost, with the order's client (one statement for the intake's whole batch).
CREATE OR REPLACE FUNCTION cardpull_ledger_on_intake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH book AS (SELECT partner_account, currency FROM ledger_book WHERE id = 1),
  t AS (
    INSERT INTO ledger_transactions (kind, order_id, client, actor)
    SELECT 'accepted', a.id, a.client, cardpull_ledger_actor() FROM added a WHERE a.status = 'pending' AND a.cost > 0
    RETURNING id, order_id
  )
  INSERT INTO ledger_entries (transaction_id, partner_account, account, amount, currency)
  SELECT t.id, book.partner_account, l.account, l.amount, book.currency
  FROM t JOIN added a ON a.id = t.order_id CROSS JOIN book
  CROSS JOIN LATERAL (VALUES ('reserved'::"LedgerAccount", a.cost::bigint), ('float'::"LedgerAccount", -a.cost::bigint)) AS l(account, amount);
  RETURN NULL;
END
$$;
