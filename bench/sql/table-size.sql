-- How the hot queries behave on a big orders table (docs/SCALING.md, "Index-only, not partitioned").
-- Run against a scratch database, migrated:
--   createdb -h 127.0.0.1 -U postgres cp_size
--   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/cp_size npm run db:migrate
--   psql -h 127.0.0.1 -U postgres cp_size -v n=2000000 -f bench/sql/table-size.sql
-- It fills `orders` with :n completed orders (ids time-ordered like UUIDv7, 60 days of them) and 500 open
-- ones, then shows the plan and timing of what runs all the time: intake's idempotency lookup, the
-- sweeper's open orders, a retention batch, the operations page's open orders by status.
\set ON_ERROR_STOP on
\timing on
TRUNCATE orders CASCADE;
INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, step_seq, created_at, updated_at, completed_at)
SELECT (lpad(to_hex(((extract(epoch FROM now()) * 1000)::bigint - 5184000000 + i * (5184000000 / :n))), 12, '0') || '7000' || '8000' || lpad(to_hex(i), 12, '0'))::uuid,
       'shop-' || (i % 20), 'key-' || i, 'h', 'failed', 'sync', 'FAST-FREE', 1000, 2,
       now() - interval '60 days' + i * (interval '60 days' / :n), now() - interval '60 days' + i * (interval '60 days' / :n), now() - interval '60 days' + i * (interval '60 days' / :n)
FROM generate_series(1, :n) i;
INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, step_seq, next_step, next_step_at, created_at, updated_at)
SELECT gen_random_uuid(), 'shop-open', 'open-' || i, 'h', 'in_progress', 'async', 'FAST-FREE', 1000, 3, 'async_poll', now() + interval '5 seconds', now(), now()
FROM generate_series(1, 500) i;
VACUUM ANALYZE orders;
SELECT pg_size_pretty(pg_relation_size('orders')) AS heap, pg_size_pretty(pg_indexes_size('orders')) AS indexes,
       (SELECT count(*) FROM orders) AS orders;
-- Intake: the idempotency key (the unique index), the first statement of every POST /v1/orders.
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id FROM orders WHERE client = 'shop-7' AND idempotency_key = 'key-1234567';
-- The sweeper, every SWEEP_INTERVAL_MS: every open order (StepsRepository.pendingSteps).
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, step_seq, next_step FROM orders WHERE next_step_at IS NOT NULL;
-- A retention batch's pick (RetentionRepository, 30 days, 500 orders; the NOT EXISTS checks left out).
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT o.id FROM orders o
  WHERE o.created_at < now() - interval '30 days' AND o.status IN ('completed', 'failed') AND o.next_step IS NULL AND o.updated_at < now() - interval '30 days'
  ORDER BY o.id LIMIT 500;
-- The operations page: orders needing attention (status index).
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id FROM orders WHERE status = 'needs_attention' ORDER BY id LIMIT 50;
