-- Less WAL per card (issue 22): the worker's two writes of a card (the take, then the store) add fewer index
-- entries. An UPDATE is HOT (one small heap record, no index entry) when it changes the value of no column an
-- index reads (in its key or its predicate) and the row's page has room; an INSERT adds an entry to every
-- index whose predicate the row meets. Measured with `BENCH_PG_STATEMENTS=1 npm run bench -- e2e`, which prints
-- the run's WAL by table, index and record type.

-- 1. The take of an attempt (created -> sent) as a HOT update. The reconciler's index read `state`, so every
--    state change wrote a new row version and an entry in each of the table's three indexes. It now reads
--    `open` (the outcome of the request ID is open: created, sent or unknown), which the take leaves as it
--    is; the store of the card (sent -> succeeded) still changes it. `open` is computed by Postgres from
--    `state`, so no writer can let them disagree. Adding it rewrites the table once (retention keeps it to
--    the attempts of RETENTION_DAYS). Each page is filled to 70 % at insert, leaving room for the take's
--    version (as for orders, migration 20261126160000_hot_take).
ALTER TABLE "attempts" ADD COLUMN "open" BOOLEAN NOT NULL GENERATED ALWAYS AS ("state" IN ('created', 'sent', 'unknown')) STORED;
ALTER TABLE "attempts" SET (fillfactor = 70);

-- The index holds what the reconciler and the operations page ask about: the open request IDs, and the ones
-- declared dead that are still read for a card (an operator's declaration, and the inferences of versions
-- before 2026-11-25); see mayYieldCardSql in libs/orders/src/model/attempt-facts.ts. A query names this
-- predicate (recheckIndexSql there) to use the index. The key is the request ID alone: the reconciler pages
-- by it.
DROP INDEX "attempts_state_request_id_idx";
CREATE INDEX "attempts_recheck_request_id_idx" ON "attempts"("request_id")
  WHERE "open" OR "declared_dead_at" IS NOT NULL OR "error_code" IN ('stored_answer', 'used_without_pull_request');

-- 2. A ledger entry is found by its transaction, and nothing names an entry by its id alone: the primary key
--    is (transaction_id, id), one index entry per leg instead of two (the id still comes from its sequence).
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_pkey";
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("transaction_id", "id");
DROP INDEX "ledger_entries_transaction_id_idx";

-- 3. An entry's transaction must exist: checked at commit by the balance check, which looks the transaction
--    up anyway, instead of a foreign key, whose check locked the transaction's row for each leg (a WAL record
--    per movement). Nothing is weaker: a ledger transaction is never deleted, nor its id changed (the
--    append-only triggers refuse UPDATE, DELETE and TRUNCATE), so one that exists at commit exists for good.
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_transaction_id_fkey";

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
    -- Written by this same database transaction: that transaction's own check sees every entry at commit.
    PERFORM 1 FROM "ledger_transactions" WHERE id = tx AND xmin = pg_current_xact_id()::xid;
    IF FOUND THEN RETURN NULL; END IF;
    PERFORM 1 FROM "ledger_transactions" WHERE id = tx;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'ledger entry names ledger transaction %, which does not exist', tx
        USING ERRCODE = 'foreign_key_violation';
    END IF;
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

-- 4. The ledger's movements are read by time in ranges (the charts, the statements, the runway's recent
--    spend), and they are written in time order: a BRIN index (a summary per block range) serves those reads
--    and adds no entry per movement, where a B-tree added one.
--    A range is summarized once the next one is started (autosummarize); the range being written is not, and
--    a read scans its pages (at most 128, 1 MB). CREATE INDEX summarizes the last range too, partly filled:
--    each movement would then widen its summary (a WAL record per movement, until the range is full), so it
--    is given back to the unsummarized state at once.
DROP INDEX "ledger_transactions_created_at_idx";
CREATE INDEX "ledger_transactions_created_at_idx" ON "ledger_transactions" USING BRIN ("created_at") WITH (autosummarize = on);
SELECT brin_desummarize_range('ledger_transactions_created_at_idx', pg_relation_size('ledger_transactions') / current_setting('block_size')::bigint / 128 * 128);
