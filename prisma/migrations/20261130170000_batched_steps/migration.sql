-- The worker's takes and card stores of one turn of its event loop now share one statement and one commit
-- (libs/orders/src/write/step-batch.ts). The orders of a statement were mostly created one after the other,
-- so they share heap pages, and the versions a statement leaves behind can only be pruned once no running
-- transaction may still see them: with each page of orders and attempts filled to 70 % at insert, about a
-- quarter of the takes and stores no longer found room on their row's page and were no HOT update any more
-- (a new row version with its index entries: 3.04 KB of WAL per card, against 2.83 KB for a statement per
-- step). Filled to 50 %, the room is back (2.78 KB per card, measured with
-- `BENCH_PG_STATEMENTS=1 BENCH_E2E_ROUNDS=1 npm run bench -- e2e`); both tables take about 40 % more pages
-- than at 70 %, which retention bounds (RETENTION_DAYS). Pages written before this migration keep their fill.
ALTER TABLE "orders" SET (fillfactor = 50);
ALTER TABLE "attempts" SET (fillfactor = 50);
