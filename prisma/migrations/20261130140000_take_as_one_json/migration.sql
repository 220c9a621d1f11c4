-- The take answers one JSON column instead of twenty (libs/orders/src/write/steps.repository.ts, TAKE_STEP_SQL):
-- node-postgres builds a result's fields and rows per query, and for twenty columns that cost the worker more
-- CPU per card than anything else of its own (docs/BENCHMARKS.md). Its server-side function changes its result
-- type, so it is dropped and created again (as 20261126170000_narrow_take did): a worker of the previous build
-- that calls it through the function (DATABASE_PREPARED_STATEMENTS=false) fails its step until it is replaced, and
-- its job is retried; with named statements (the default) it does not call the function.
DROP FUNCTION IF EXISTS cardpull_take_step(uuid, integer, text, double precision);
CREATE OR REPLACE FUNCTION cardpull_take_step(uuid, integer, text, double precision)
RETURNS TABLE ("step" json)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY WITH prev_attempt AS (
    SELECT a.request_id, a.state FROM attempts a WHERE a.order_id = $1 ORDER BY a.seq DESC LIMIT 1
  ), prev_order AS (
    SELECT lease_owner FROM orders WHERE id = $1
  ), leased AS (
    UPDATE orders SET lease_owner = $3, lease_expires_at = now() + make_interval(secs => $4::float8 / 1000)
    WHERE id = $1 AND step_seq = $2 AND next_step IN ('sync_call', 'async_create')
      AND next_step_at <= now() + interval '1 second'
      AND (lease_expires_at IS NULL OR lease_expires_at < now() OR lease_owner = $3)
    RETURNING *
  ), sent AS (
    UPDATE attempts SET state = 'sent', call_count = call_count + 1, first_sent_at = COALESCE(first_sent_at, now()),
           last_sent_at = now(), updated_at = now()
    FROM prev_attempt p
    WHERE attempts.request_id = p.request_id AND p.state <> 'sent' AND EXISTS (SELECT 1 FROM leased)
    RETURNING attempts.*
  )
  SELECT row_to_json(taken) AS step FROM (
    SELECT o.id, o.status, o.mode, o.gift_card_code AS "giftCardCode", o.amount, o.error_code AS "errorCode", o.error_message AS "errorMessage", o.next_step AS "nextStep", o.next_step_at AS "nextStepAt", o.step_seq AS "stepSeq", o.lease_owner AS "leaseOwner", o.lease_expires_at AS "leaseExpiresAt", o.wait_deadline AS "waitDeadline", o.created_at AS "createdAt", o.card_id AS "cardId", EXISTS (SELECT 1 FROM leased) AS leased, (SELECT state FROM prev_attempt) AS "previousState",
           (SELECT lease_owner FROM prev_order) AS "previousOwner", now() AS "dbNow",
           (SELECT row_to_json(x) FROM (SELECT a.request_id AS "requestId", a.order_id AS "orderId", a.seq, a.kind, a.state, a.partner_status AS "partnerStatus", a.error_code AS "errorCode", a.error_message AS "errorMessage", a.call_count AS "callCount", a.first_sent_at AS "firstSentAt", a.last_sent_at AS "lastSentAt", a.unknown_since AS "unknownSince", a.not_found_since AS "notFoundSince", a.declared_dead_at AS "declaredDeadAt", a.declared_dead_by AS "declaredDeadBy", a.created_at AS "createdAt", a.updated_at AS "updatedAt"
              FROM (SELECT * FROM sent UNION ALL SELECT attempts.* FROM attempts, prev_attempt p
                    WHERE attempts.request_id = p.request_id AND NOT EXISTS (SELECT 1 FROM sent)) a) x) AS attempt
    FROM (SELECT * FROM leased UNION ALL SELECT * FROM orders WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM leased)) o) taken;
END
$fn$;
