-- A card stored under another request ID than the one asked (a mismatch) leaves ours open, as unknown: the
-- store now starts that ID's unknown-outcome window (unknown_since) as every other move to unknown does. It
-- moved the state alone, so the ledger held the order's money in in_doubt for an ID that the rest of the
-- service (the reconciliation checks, the money-in-doubt figures) did not count as of unknown outcome.
-- Found by test/money-safety/partner-word.e2e-spec.ts (its ledger check, now and then on a loaded machine).
-- Rows already in that state are given the window from their last update.
UPDATE "attempts" SET unknown_since = updated_at WHERE state = 'unknown' AND unknown_since IS NULL;

-- The hot statements as server-side functions (libs/orders/src/write/server-functions.ts): their plans are kept per
-- database connection, also behind a transaction pooler that loses named prepared statements. Generated from
-- the statements in the repositories by hotFunctionsMigration() (libs/orders/src/write/hot-functions.ts).

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

CREATE OR REPLACE FUNCTION cardpull_take_step(uuid, integer, text, double precision)
RETURNS TABLE ("id" uuid, "status" "OrderStatus", "mode" "PullMode", "giftCardCode" text, "amount" integer, "errorCode" text, "errorMessage" text, "nextStep" "OrderStep", "nextStepAt" timestamptz, "stepSeq" integer, "leaseOwner" text, "leaseExpiresAt" timestamptz, "waitDeadline" timestamptz, "createdAt" timestamptz, "cardId" uuid, "leased" boolean, "previousState" "AttemptState", "previousOwner" text, "dbNow" timestamptz, "attempt" json)
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
  SELECT o.id, o.status, o.mode, o.gift_card_code AS "giftCardCode", o.amount, o.error_code AS "errorCode", o.error_message AS "errorMessage", o.next_step AS "nextStep", o.next_step_at AS "nextStepAt", o.step_seq AS "stepSeq", o.lease_owner AS "leaseOwner", o.lease_expires_at AS "leaseExpiresAt", o.wait_deadline AS "waitDeadline", o.created_at AS "createdAt", o.card_id AS "cardId", EXISTS (SELECT 1 FROM leased) AS leased, (SELECT state FROM prev_attempt) AS "previousState",
         (SELECT lease_owner FROM prev_order) AS "previousOwner", now() AS "dbNow",
         (SELECT row_to_json(x) FROM (SELECT a.request_id AS "requestId", a.order_id AS "orderId", a.seq, a.kind, a.state, a.partner_status AS "partnerStatus", a.error_code AS "errorCode", a.error_message AS "errorMessage", a.call_count AS "callCount", a.first_sent_at AS "firstSentAt", a.last_sent_at AS "lastSentAt", a.unknown_since AS "unknownSince", a.not_found_since AS "notFoundSince", a.declared_dead_at AS "declaredDeadAt", a.declared_dead_by AS "declaredDeadBy", a.created_at AS "createdAt", a.updated_at AS "updatedAt"
            FROM (SELECT * FROM sent UNION ALL SELECT attempts.* FROM attempts, prev_attempt p
                  WHERE attempts.request_id = p.request_id AND NOT EXISTS (SELECT 1 FROM sent)) a) x) AS attempt
  FROM (SELECT * FROM leased UNION ALL SELECT * FROM orders WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM leased)) o;
END
$fn$;

CREATE OR REPLACE FUNCTION cardpull_store_card(uuid, uuid, text, text, text, bytea, bytea, timestamptz, integer, text, bytea, text, text, "AttemptState", text)
RETURNS TABLE ("role" text, "status" "OrderStatus", "callbacks" text[])
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY WITH prev AS (
    SELECT id, status, card_id FROM orders WHERE id = $1 FOR UPDATE
  ), kind AS (
    SELECT (CASE WHEN prev.card_id IS NOT NULL THEN 'surplus' WHEN $12::text IS NOT NULL THEN 'mismatch' ELSE 'order' END)::"CardRole" AS role
    FROM prev
  ), ins AS (
    INSERT INTO cards (id, order_id, request_id, partner_card_id, key_id, code_enc, pin_enc, expire_at, amount, gift_card_code, pdf_enc, mismatch, role)
    SELECT $2::uuid, prev.id, $3, $4, $5, $6, $7, $8::timestamptz, $9, $10, $11, $12, kind.role FROM prev, kind
    ON CONFLICT (partner_card_id) DO NOTHING
    RETURNING id
  ), role AS (
    SELECT CASE WHEN EXISTS (SELECT 1 FROM ins) THEN kind.role::text ELSE 'known' END AS role FROM kind
  ), o AS (
    UPDATE orders SET
      status = CASE WHEN r.role = 'order' THEN 'completed'::"OrderStatus" ELSE 'needs_attention'::"OrderStatus" END,
      card_id = CASE WHEN r.role = 'order' THEN $2::uuid ELSE NULL END,
      completed_at = CASE WHEN r.role = 'order' THEN now() ELSE NULL END,
      error_code = CASE WHEN r.role = 'order' THEN NULL ELSE 'card_mismatch' END,
      error_message = CASE WHEN r.role = 'order' THEN NULL
        ELSE 'The partner''s card ' || $4 || ' for request ID ' || $3 || ' does not match the order: ' || $12 END,
      next_step = NULL, next_step_at = NULL, step_seq = step_seq + 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
    FROM role r
    WHERE orders.id = $1 AND (r.role = 'order' OR (r.role = 'mismatch' AND orders.status NOT IN ('completed', 'failed')))
    RETURNING orders.id, orders.status, orders.client, orders.callback_url, orders.error_code, orders.error_message
  ), att AS (
    UPDATE attempts SET updated_at = now(), state = $14,
      unknown_since = CASE WHEN $14 = 'unknown' THEN COALESCE(unknown_since, now()) ELSE unknown_since END,
      partner_status = CASE WHEN $14 = 'succeeded' THEN $15 ELSE partner_status END,
      error_code = CASE WHEN $14 = 'succeeded' THEN NULL ELSE error_code END,
      error_message = CASE WHEN $14 = 'succeeded' THEN NULL ELSE error_message END,
      not_found_since = CASE WHEN $14 = 'succeeded' THEN NULL ELSE not_found_since END WHERE request_id = $3 AND EXISTS (SELECT 1 FROM ins)
  ), ev AS (
    INSERT INTO order_events (order_id, type, from_status, to_status, request_id, actor, detail)
    SELECT prev.id,
           CASE WHEN r.role = 'order' AND prev.status = 'failed' THEN 'completed_after_failed'
                WHEN r.role = 'order' THEN 'completed' WHEN r.role = 'surplus' THEN 'surplus_card' ELSE 'card_mismatch' END,
           prev.status, COALESCE((SELECT status FROM o), prev.status), $3, $13,
           CASE WHEN r.role = 'order' AND prev.status <> 'failed' THEN NULL
                ELSE jsonb_strip_nulls(jsonb_build_object('partner_card_id', $4::text, 'mismatch', $12::text)) END
    FROM prev, role r WHERE r.role <> 'known'
  ), cb AS (INSERT INTO callback_events (id, order_id, client, type, url, snapshot)
    SELECT gen_random_uuid(), o.id, o.client, 'order.' || o.status, o.callback_url,
           jsonb_build_object('status', o.status, 'error', CASE WHEN o.error_code IS NULL THEN NULL
             ELSE jsonb_build_object('code', o.error_code, 'message', o.error_message) END)
    FROM o, prev
    WHERE o.callback_url IS NOT NULL AND o.status IN ('completed', 'failed', 'needs_attention')
      AND o.status IS DISTINCT FROM prev.status
    RETURNING id)
  SELECT r.role, COALESCE((SELECT status FROM o), prev.status) AS status, ARRAY(SELECT id::text FROM cb) AS callbacks FROM prev, role r;
END
$fn$;

CREATE OR REPLACE FUNCTION cardpull_transition(uuid, integer, "OrderStep", double precision, "OrderStatus", boolean, text, text, double precision, boolean, text, text, "AttemptState", boolean, text, boolean, text, text, text, timestamptz, text, text, text, "PullMode", text, text, text, jsonb)
RETURNS TABLE ("step_seq" integer, "status" "OrderStatus", "callbacks" text[])
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY WITH prev AS (SELECT status FROM orders WHERE id = $1),
  o AS (UPDATE orders SET step_seq = step_seq + 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
          next_step = $3,
          next_step_at = CASE WHEN $3 IS NULL THEN NULL ELSE now() + make_interval(secs => $4 / 1000) END,
          status = COALESCE($5, CASE WHEN status = 'pending' AND lease_owner IS NOT NULL THEN 'in_progress'::"OrderStatus" ELSE status END),
          completed_at = CASE WHEN $5 = 'failed' THEN now() ELSE completed_at END,
          error_code = CASE WHEN $6 THEN $7 ELSE error_code END,
          error_message = CASE WHEN $6 THEN $8 ELSE error_message END,
          wait_deadline = CASE WHEN $9 IS NULL THEN wait_deadline ELSE COALESCE(wait_deadline, now() + make_interval(secs => $9 / 1000)) END
        WHERE id = $1 AND step_seq = $2
          AND (NOT $10 OR lease_expires_at IS NULL OR lease_expires_at < now())
          AND ($11 IS NULL OR EXISTS (SELECT 1 FROM attempts WHERE request_id = $11 AND order_id = $1 AND state = 'failed_definitive'))
        RETURNING id, step_seq, status, client, callback_url, error_code, error_message),
  cb AS (INSERT INTO callback_events (id, order_id, client, type, url, snapshot)
    SELECT gen_random_uuid(), o.id, o.client, 'order.' || o.status, o.callback_url,
           jsonb_build_object('status', o.status, 'error', CASE WHEN o.error_code IS NULL THEN NULL
             ELSE jsonb_build_object('code', o.error_code, 'message', o.error_message) END)
    FROM o, prev
    WHERE o.callback_url IS NOT NULL AND o.status IN ('completed', 'failed', 'needs_attention')
      AND o.status IS DISTINCT FROM prev.status
    RETURNING id),
  att AS (UPDATE attempts SET updated_at = now(),
          state = COALESCE($13, state),
          partner_status = CASE WHEN $14 THEN $15 ELSE partner_status END,
          error_code = CASE WHEN $16 THEN $17 ELSE error_code END,
          error_message = CASE WHEN $16 THEN $18 ELSE error_message END,
          unknown_since = CASE $19 WHEN 'start' THEN COALESCE(unknown_since, now()) WHEN 'restart' THEN now()
                                   WHEN 'at' THEN COALESCE(unknown_since, $20) ELSE unknown_since END,
          not_found_since = CASE $21 WHEN 'start' THEN COALESCE(not_found_since, now()) WHEN 'clear' THEN NULL ELSE not_found_since END,
          declared_dead_at = CASE WHEN $22 IS NULL THEN declared_dead_at ELSE now() END,
          declared_dead_by = COALESCE($22, declared_dead_by)
        WHERE $12 IS NOT NULL AND request_id = $12 AND EXISTS (SELECT 1 FROM o)),
  new_att AS (INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
        SELECT $23, $1, (SELECT COALESCE(max(seq), 0) + 1 FROM attempts WHERE order_id = $1), $24, 'created', now(), now()
        FROM o WHERE $23 IS NOT NULL),
  ev AS (INSERT INTO order_events (order_id, type, from_status, to_status, request_id, actor, detail)
        SELECT $1, COALESCE($25, o.status::text), prev.status, o.status, $26, $27, $28 FROM o, prev
        WHERE $25 IS NOT NULL OR o.status IS DISTINCT FROM prev.status)
  SELECT o.step_seq, o.status, ARRAY(SELECT id::text FROM cb) AS callbacks FROM o;
END
$fn$;
