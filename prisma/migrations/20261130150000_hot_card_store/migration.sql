-- Less WAL per card (issue 22): storing a card (the attempt sent -> succeeded) is a HOT update of the attempt,
-- as its take (created -> sent) already was. Before, the reconciler's partial index read `open` (created, sent
-- or unknown), which the store turns false: each card wrote a new row version of its attempt and an entry in
-- the table's two other indexes (0.19 KB). Measured with `BENCH_PG_STATEMENTS=1 npm run bench -- e2e`.
--
-- The reconciler asks about an open request ID only when no step of its order asks about it (its order has
-- no next step), and the money-in-doubt figures count the IDs of unknown outcome. Neither needs the IDs that
-- a step is driving right now, which are nearly all the open ones. The index now holds:
--  - `in_doubt`: the ID's outcome is unknown (sent or unknown, with an unknown-outcome window). Computed by
--    Postgres from the state and the window: a card stored for an ID that was never in doubt leaves it false.
--  - `unattended`: the ID is open (sent or unknown) and its order has, or had since, no next step: no step
--    asks about it, the reconciler must. Written only by the triggers below, never by the service, so no
--    writer can forget it: an order whose next step ends (completed by another ID's card, failed, needing
--    attention) marks its open IDs; an ID inserted open, or opened again, is marked if its order has no next
--    step. It is never cleared: an ID that settles afterwards stays in the index, which stays small (these
--    are rare), and every query also reads the state.
--  - as before, the IDs declared dead that are still read for a card (mayYieldCardSql in
--    libs/orders/src/model/attempt-facts.ts).
-- A new ID (created) is in none of these: the intake adds no entry to this index either.
ALTER TABLE "attempts" ADD COLUMN "in_doubt" BOOLEAN NOT NULL
  GENERATED ALWAYS AS ("state" IN ('sent', 'unknown') AND "unknown_since" IS NOT NULL) STORED;
ALTER TABLE "attempts" ADD COLUMN "unattended" BOOLEAN NOT NULL DEFAULT false;

UPDATE "attempts" a SET "unattended" = true
  FROM "orders" o
 WHERE o."id" = a."order_id" AND o."next_step" IS NULL AND a."state" IN ('sent', 'unknown');

-- An order's next step ends: its open IDs are the reconciler's from now on. Runs after the statement's
-- changes (an attempt the same statement settled is not marked). On the store of a card this finds nothing
-- (the attempt is succeeded by then): one look-up by the order's attempts index.
CREATE FUNCTION cardpull_attempts_unattended_on_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "attempts" SET "unattended" = true
   WHERE "order_id" = NEW."id" AND "state" IN ('sent', 'unknown') AND NOT "unattended";
  RETURN NULL;
END
$$;
CREATE TRIGGER orders_step_ended AFTER UPDATE OF "next_step" ON "orders" FOR EACH ROW
  WHEN (OLD."next_step" IS NOT NULL AND NEW."next_step" IS NULL)
  EXECUTE FUNCTION cardpull_attempts_unattended_on_order();

-- An ID written open while its order has no next step (an archived order restored): marked as it is written.
CREATE FUNCTION cardpull_attempts_unattended_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."unattended" := NEW."unattended" OR NOT EXISTS (SELECT 1 FROM "orders" WHERE "id" = NEW."order_id" AND "next_step" IS NOT NULL);
  RETURN NEW;
END
$$;
CREATE TRIGGER attempts_unattended_insert BEFORE INSERT ON "attempts" FOR EACH ROW
  WHEN (NEW."state" IN ('sent', 'unknown'))
  EXECUTE FUNCTION cardpull_attempts_unattended_on_insert();

-- An ID opened again (from a settled state: no path of the service does it today) while its order has no next
-- step: marked after the fact. An AFTER trigger, not a BEFORE one: a BEFORE UPDATE row trigger makes Postgres
-- lock the row before every update that names the state (the take, the store), a WAL record each, even when
-- its WHEN clause then skips it. The take (created -> sent) is not a reopening: it leases only a due step.
CREATE FUNCTION cardpull_attempts_unattended_on_reopen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "attempts" SET "unattended" = true
   WHERE "request_id" = NEW."request_id" AND NOT "unattended"
     AND NOT EXISTS (SELECT 1 FROM "orders" WHERE "id" = NEW."order_id" AND "next_step" IS NOT NULL);
  RETURN NULL;
END
$$;
CREATE TRIGGER attempts_unattended_reopen AFTER UPDATE OF "state" ON "attempts" FOR EACH ROW
  WHEN (NEW."state" IN ('sent', 'unknown') AND OLD."state" NOT IN ('created', 'sent', 'unknown'))
  EXECUTE FUNCTION cardpull_attempts_unattended_on_reopen();

DROP INDEX "attempts_recheck_request_id_idx";
CREATE INDEX "attempts_recheck_request_id_idx" ON "attempts"("request_id")
  WHERE "in_doubt" OR "unattended" OR "declared_dead_at" IS NOT NULL OR "error_code" IN ('stored_answer', 'used_without_pull_request');

-- Read by no index and no query any more.
ALTER TABLE "attempts" DROP COLUMN "open";
