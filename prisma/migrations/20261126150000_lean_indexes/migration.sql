-- Fewer index entries per card (issue 22: WAL and Postgres CPU per card). An UPDATE that is not HOT adds an
-- entry to every index of the table, except a partial index whose predicate the new row does not meet; an
-- INSERT adds one to every index. Each index below keeps what a measured query reads and no more.

-- The timeline is read by order (order_id, id): that is now the primary key, and the separate index on the
-- same columns goes (one index entry per event instead of two; cascades from orders still use it).
ALTER TABLE "order_events" DROP CONSTRAINT "order_events_pkey";
ALTER TABLE "order_events" ADD CONSTRAINT "order_events_pkey" PRIMARY KEY ("order_id", "id");
DROP INDEX "order_events_order_id_id_idx";

-- The operations search by Idempotency-Key goes through (client, idempotency_key) with the known clients.
DROP INDEX "orders_idempotency_key_idx";

-- Only orders with a next step are looked up by its time (the sweeper, the repair): a finished order leaves
-- the index instead of adding a NULL entry.
DROP INDEX "orders_next_step_at_idx";
CREATE INDEX "orders_next_step_at_idx" ON "orders"("next_step_at") WHERE "next_step_at" IS NOT NULL;

-- Invariant 3 (one order per card) needs uniqueness among the cards set; NULLs (every order until it is
-- completed) need no entry. The foreign key's lookups (card_id = $1) use the partial index.
DROP INDEX "orders_card_id_key";
CREATE UNIQUE INDEX "orders_card_id_key" ON "orders"("card_id") WHERE "card_id" IS NOT NULL;

-- Lists and counts by status read the orders that are not completed (needs attention, failed, in flight);
-- completed orders, almost all of them, are paged by id, where a status filter finds a page at once.
DROP INDEX "orders_status_id_idx";
CREATE INDEX "orders_status_id_idx" ON "orders"("status", "id") WHERE "status" <> 'completed';

-- The reconciler and the operations page read attempts whose outcome may still change; a succeeded
-- attempt (one per card) has none.
DROP INDEX "attempts_state_request_id_idx";
CREATE INDEX "attempts_state_request_id_idx" ON "attempts"("state", "request_id") WHERE "state" <> 'succeeded';

-- The operations page lists the surplus and mismatched cards; an order's own card (all but a few) is not listed.
DROP INDEX "cards_role_created_at_idx";
CREATE INDEX "cards_role_created_at_idx" ON "cards"("role", "created_at") WHERE "role" <> 'order';
