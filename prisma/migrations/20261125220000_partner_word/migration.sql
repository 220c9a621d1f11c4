-- Invariant 2, tightened: a request ID dies only on the partner's word or an operator's audited declaration.
ALTER TABLE "attempts" ADD COLUMN "declared_dead_at" TIMESTAMPTZ(3),
ADD COLUMN "declared_dead_by" TEXT;

-- The order error code of an outcome that stays unknown is `outcome_unknown` (was `unknown_outcome`).
UPDATE "orders" SET "error_code" = 'outcome_unknown' WHERE "error_code" = 'unknown_outcome';

-- "Mark failed" is now the operator's declaration that the request ID is dead. Orders marked failed before
-- kept their ID open (and the reconciler re-sent it): their open IDs are declared dead by the operator who
-- marked the order failed, as the action now does.
UPDATE "attempts" a SET "state" = 'failed_definitive', "declared_dead_at" = e."at", "declared_dead_by" = e."actor",
       "error_code" = 'declared_dead', "error_message" = 'marked failed by ' || e."actor" || ': ' || coalesce(e."detail"->>'reason', ''),
       "updated_at" = now()
FROM "orders" o
JOIN LATERAL (SELECT "at", "actor", "detail" FROM "order_events" WHERE "order_id" = o."id" AND "type" = 'marked_failed' ORDER BY "id" DESC LIMIT 1) e ON true
WHERE a."order_id" = o."id" AND o."status" = 'failed' AND o."error_code" = 'marked_failed' AND a."state" IN ('created', 'sent', 'unknown');

-- An order that needs attention while its request ID is open keeps being asked by its own step now (the
-- reconciler asked it before): give such orders their step back, due at once.
UPDATE "orders" o SET "next_step" = (CASE WHEN o."mode" = 'sync' THEN 'sync_call' ELSE 'async_poll' END)::"OrderStep",
       "next_step_at" = now(), "step_seq" = o."step_seq" + 1,
       "error_code" = CASE WHEN o."error_code" IS NULL THEN 'outcome_unknown' ELSE o."error_code" END
FROM (SELECT DISTINCT ON ("order_id") "order_id", "state" FROM "attempts" ORDER BY "order_id", "seq" DESC) a
WHERE a."order_id" = o."id" AND o."status" = 'needs_attention' AND o."next_step" IS NULL AND a."state" IN ('sent', 'unknown');
