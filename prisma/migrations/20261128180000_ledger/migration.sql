-- The ledger (issue 24): double entry, per partner account, in minor units. The database itself keeps its
-- two rules, for every writer (the service, a script, an operator at psql): entries are never changed or
-- removed, and no transaction commits with entries that do not balance.

-- CreateEnum
CREATE TYPE "LedgerAccount" AS ENUM ('float', 'reserved', 'in_doubt', 'spent', 'surplus', 'adjustments');

-- CreateTable
CREATE TABLE "ledger_transactions" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "order_id" UUID,
    "request_id" TEXT,
    "actor" TEXT NOT NULL,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" BIGSERIAL NOT NULL,
    "transaction_id" BIGINT NOT NULL,
    "partner_account" TEXT NOT NULL,
    "account" "LedgerAccount" NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ledger_transactions_order_id_idx" ON "ledger_transactions"("order_id");

-- CreateIndex
CREATE INDEX "ledger_transactions_created_at_idx" ON "ledger_transactions"("created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_transaction_id_idx" ON "ledger_entries"("transaction_id");

-- CreateIndex
CREATE INDEX "ledger_entries_partner_account_account_idx" ON "ledger_entries"("partner_account", "account");

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "ledger_transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Append-only: an UPDATE, DELETE or TRUNCATE of either table is refused.
CREATE FUNCTION cardpull_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only: % on % refused (record a correcting transaction instead)', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON "ledger_transactions"
  FOR EACH ROW EXECUTE FUNCTION cardpull_ledger_append_only();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON "ledger_transactions"
  FOR EACH STATEMENT EXECUTE FUNCTION cardpull_ledger_append_only();
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION cardpull_ledger_append_only();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON "ledger_entries"
  FOR EACH STATEMENT EXECUTE FUNCTION cardpull_ledger_append_only();

-- Balanced: checked when the database transaction commits (a deferred constraint trigger), so the entries of
-- one ledger transaction may be inserted in any order and any number of statements before it. Each ledger
-- transaction has at least two entries, and its entries sum to zero in each currency.
CREATE FUNCTION cardpull_ledger_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tx bigint;
  legs int;
  off record;
BEGIN
  -- (Each branch is planned only when it runs: the other table's row has no such field.)
  IF TG_TABLE_NAME = 'ledger_entries' THEN tx := NEW.transaction_id; ELSE tx := NEW.id; END IF;
  SELECT count(*) INTO legs FROM "ledger_entries" WHERE transaction_id = tx;
  IF legs < 2 THEN
    RAISE EXCEPTION 'ledger transaction % has % entries: a movement of money has two sides at least', tx, legs
      USING ERRCODE = 'check_violation';
  END IF;
  SELECT currency, sum(amount) AS total INTO off FROM "ledger_entries" WHERE transaction_id = tx
    GROUP BY currency HAVING sum(amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % does not balance: its % entries sum to %', tx, off.currency, off.total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER ledger_transactions_balanced AFTER INSERT ON "ledger_transactions"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cardpull_ledger_balanced();
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON "ledger_entries"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cardpull_ledger_balanced();
