-- AlterTable
ALTER TABLE "ledger_transactions" ADD COLUMN     "card_id" UUID;

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "catalog_snapshot" TEXT,
ADD COLUMN     "cost" INTEGER,
ADD COLUMN     "discount_ppm" INTEGER;

-- CreateTable
CREATE TABLE "catalog_snapshots" (
    "id" TEXT NOT NULL,
    "gift_card_code" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "brand" TEXT NOT NULL,
    "face_values" JSONB NOT NULL,
    "terms_digest" TEXT NOT NULL,
    "discount" DOUBLE PRECISION NOT NULL,
    "next_discounts" JSONB NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "catalog_snapshots_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_book" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "partner_account" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_book_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "catalog_snapshots_gift_card_code_first_seen_at_idx" ON "catalog_snapshots"("gift_card_code", "first_seen_at");

-- The book: which partner account and currency the order changes' entries are in (the service sets it at
-- start from PARTNER_ACCOUNT and PARTNER_CURRENCY).
ALTER TABLE "ledger_book" ADD CONSTRAINT "ledger_book_one_row" CHECK ("id" = 1);
INSERT INTO "ledger_book" ("id", "partner_account", "currency") VALUES (1, 'partner', 'EUR');

-- A leg moves money: a zero amount is no leg (and one nonzero leg alone can never balance).
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_amount_not_zero" CHECK ("amount" <> 0);

-- The order changes write their own movements: triggers, in the transaction (the same statement) of the
-- change, whatever wrote it (the intake, a worker's transition, the card's storing, an operator's action).
-- An order accepted before this migration has no cost and stays outside the ledger.

-- Who: the connection's application_name (the service names its pools), else 'cardpull'.
CREATE FUNCTION cardpull_ledger_actor() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('application_name', true), ''), 'cardpull')
$$;

-- One movement: its legs (accounts and amounts, zero legs left out) in the book's account and currency.
CREATE FUNCTION cardpull_ledger_post(p_kind text, p_order uuid, p_request text, p_card uuid, p_accounts "LedgerAccount"[], p_amounts bigint[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  book record;
  tx bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM unnest(p_amounts) m WHERE m <> 0) THEN RETURN; END IF;
  SELECT partner_account, currency INTO book FROM ledger_book WHERE id = 1;
  INSERT INTO ledger_transactions (kind, order_id, request_id, card_id, actor)
    VALUES (p_kind, p_order, p_request, p_card, cardpull_ledger_actor()) RETURNING id INTO tx;
  INSERT INTO ledger_entries (transaction_id, partner_account, account, amount, currency)
    SELECT tx, book.partner_account, l.account, l.amount, book.currency FROM unnest(p_accounts, p_amounts) AS l(account, amount) WHERE l.amount <> 0;
END
$$;

-- What an order holds now: its reservation, in `reserved` or `in_doubt` (no row: nothing).
CREATE FUNCTION cardpull_ledger_held(p_order uuid, OUT account "LedgerAccount", OUT amount bigint) LANGUAGE sql STABLE AS $$
  SELECT e.account, sum(e.amount)::bigint FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
  WHERE t.order_id = p_order AND e.account IN ('reserved', 'in_doubt')
  GROUP BY e.account HAVING sum(e.amount) <> 0 LIMIT 1
$$;

-- Moves what the order holds to `p_to` (nothing when it holds nothing, or holds it there already).
CREATE FUNCTION cardpull_ledger_move(p_order uuid, p_to "LedgerAccount", p_kind text, p_request text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  h record;
BEGIN
  SELECT * INTO h FROM cardpull_ledger_held(p_order);
  IF h.amount IS NULL OR h.account = p_to THEN RETURN; END IF;
  PERFORM cardpull_ledger_post(p_kind, p_order, p_request, NULL, ARRAY[h.account, p_to], ARRAY[-h.amount, h.amount]);
END
$$;

-- Accepted: float to reserved, at the order's cost (one statement for the intake's whole batch).
CREATE FUNCTION cardpull_ledger_on_intake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH book AS (SELECT partner_account, currency FROM ledger_book WHERE id = 1),
  t AS (
    INSERT INTO ledger_transactions (kind, order_id, actor)
    SELECT 'accepted', a.id, cardpull_ledger_actor() FROM added a WHERE a.status = 'pending' AND a.cost > 0
    RETURNING id, order_id
  )
  INSERT INTO ledger_entries (transaction_id, partner_account, account, amount, currency)
  SELECT t.id, book.partner_account, l.account, l.amount, book.currency
  FROM t JOIN added a ON a.id = t.order_id CROSS JOIN book
  CROSS JOIN LATERAL (VALUES ('reserved'::"LedgerAccount", a.cost::bigint), ('float'::"LedgerAccount", -a.cost::bigint)) AS l(account, amount);
  RETURN NULL;
END
$$;
CREATE TRIGGER orders_ledger_accepted AFTER INSERT ON "orders" REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION cardpull_ledger_on_intake();

-- Failed: what the order held back to float. Live again after failing: float to reserved (a card that
-- completes a failed order is the card trigger's: float to spent).
CREATE FUNCTION cardpull_ledger_on_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'failed' THEN
    PERFORM cardpull_ledger_move(NEW.id, 'float', 'failed', NULL);
  ELSE
    PERFORM cardpull_ledger_post('revived', NEW.id, NULL, NULL, ARRAY['reserved', 'float']::"LedgerAccount"[], ARRAY[NEW.cost, -NEW.cost]::bigint[]);
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER orders_ledger_status AFTER UPDATE OF status ON "orders" FOR EACH ROW
  WHEN (NEW.cost IS NOT NULL AND OLD.status IS DISTINCT FROM NEW.status
        AND (NEW.status = 'failed' OR (OLD.status = 'failed' AND NEW.status <> 'completed')))
  EXECUTE FUNCTION cardpull_ledger_on_status();

-- An ID of unknown outcome: reserved to in_doubt. Once its fate is known without a card (failed, or declared
-- dead by an operator): back to reserved (the order goes on, or fails and releases it). With a card: the card
-- trigger moves it to spent.
CREATE FUNCTION cardpull_ledger_on_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'unknown' THEN
    PERFORM cardpull_ledger_move(NEW.order_id, 'in_doubt', 'unknown', NEW.request_id);
  ELSE
    PERFORM cardpull_ledger_move(NEW.order_id, 'reserved', CASE WHEN NEW.declared_dead_at IS NULL THEN 'resolved' ELSE 'declared_dead' END, NEW.request_id);
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER attempts_ledger AFTER UPDATE OF state ON "attempts" FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state
        AND (NEW.state = 'unknown' OR (NEW.state = 'failed_definitive' AND NEW.unknown_since IS NOT NULL)))
  EXECUTE FUNCTION cardpull_ledger_on_attempt();

-- A card stored: the order's own card takes what the order held to spent, at the card's cost (a difference,
-- none when the order held its cost, comes from float); any other card of the order (surplus, mismatch) is
-- float to surplus at its cost. A card restored from the archive moved its money when first stored: nothing.
CREATE FUNCTION cardpull_ledger_on_card() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  o record;
  h record;
  moved boolean;
  cost bigint;
BEGIN
  SELECT discount_ppm INTO o FROM orders WHERE id = NEW.order_id;
  IF o.discount_ppm IS NULL THEN RETURN NULL; END IF;
  SELECT bool_or(t.card_id = NEW.id) INTO moved FROM ledger_transactions t WHERE t.order_id = NEW.order_id;
  IF moved THEN RETURN NULL; END IF;
  cost := NEW.amount - (NEW.amount::bigint * o.discount_ppm + 500000) / 1000000;
  IF NEW.role = 'order' THEN
    SELECT * INTO h FROM cardpull_ledger_held(NEW.order_id);
    PERFORM cardpull_ledger_post('card_stored', NEW.order_id, NEW.request_id, NEW.id,
      ARRAY['spent', coalesce(h.account, 'reserved'), 'float']::"LedgerAccount"[],
      ARRAY[cost, -coalesce(h.amount, 0), coalesce(h.amount, 0) - cost]::bigint[]);
  ELSE
    PERFORM cardpull_ledger_post('surplus', NEW.order_id, NEW.request_id, NEW.id, ARRAY['surplus', 'float']::"LedgerAccount"[], ARRAY[cost, -cost]::bigint[]);
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER cards_ledger AFTER INSERT ON "cards" FOR EACH ROW EXECUTE FUNCTION cardpull_ledger_on_card();

-- The intake statement's function, now with the order's price (discount_ppm, cost, catalog_snapshot).
CREATE OR REPLACE FUNCTION cardpull_intake(jsonb)
RETURNS TABLE ("id" uuid, "client" text, "idempotencyKey" text, "requestHash" text, "status" "OrderStatus", "mode" "PullMode", "giftCardCode" text, "amount" integer, "metadata" jsonb, "errorCode" text, "errorMessage" text, "nextStep" "OrderStep", "nextStepAt" timestamptz, "stepSeq" integer, "leaseOwner" text, "leaseExpiresAt" timestamptz, "waitDeadline" timestamptz, "callbackUrl" text, "callbackSecrets" boolean, "createdAt" timestamptz, "updatedAt" timestamptz, "completedAt" timestamptz, "cardId" uuid, "traceParent" text)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, client text, idempotency_key text, request_hash text,
      mode "PullMode", gift_card_code text, amount int, metadata jsonb, next_step "OrderStep", request_id text, actor text, callback_url text, callback_secrets boolean, trace_parent text,
      discount_ppm int, cost int, catalog_snapshot text)
  ), ins AS (
    INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, metadata,
                        next_step, next_step_at, step_seq, callback_url, callback_secrets, trace_parent, created_at, updated_at,
                        discount_ppm, cost, catalog_snapshot)
    SELECT id, client, idempotency_key, request_hash, 'pending', mode, gift_card_code, amount, metadata, next_step, now(), 1, callback_url, callback_secrets, trace_parent, now(), now(),
           discount_ppm, cost, catalog_snapshot
    FROM input
    ON CONFLICT (client, idempotency_key) DO NOTHING
    RETURNING *
  ), att AS (
    INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
    SELECT i.request_id, ins.id, 1, ins.mode, 'created', now(), now() FROM ins JOIN input i ON i.id = ins.id
  ), ev AS (
    INSERT INTO order_events (order_id, type, to_status, request_id, actor, detail)
    SELECT ins.id, 'created', 'pending', i.request_id, i.actor, jsonb_build_object('mode', ins.mode) FROM ins JOIN input i ON i.id = ins.id
  )
  SELECT o.id, o.client, o.idempotency_key AS "idempotencyKey", o.request_hash AS "requestHash", o.status, o.mode, o.gift_card_code AS "giftCardCode", o.amount, o.metadata, o.error_code AS "errorCode", o.error_message AS "errorMessage", o.next_step AS "nextStep", o.next_step_at AS "nextStepAt", o.step_seq AS "stepSeq", o.lease_owner AS "leaseOwner", o.lease_expires_at AS "leaseExpiresAt", o.wait_deadline AS "waitDeadline", o.callback_url AS "callbackUrl", o.callback_secrets AS "callbackSecrets", o.created_at AS "createdAt", o.updated_at AS "updatedAt", o.completed_at AS "completedAt", o.card_id AS "cardId", o.trace_parent AS "traceParent" FROM ins o;
END
$fn$;

