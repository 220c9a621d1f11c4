/**
 * Polls of pull requests and funds/stock re-checks (the `background` steps of ORDER_STEPS) wait behind partner calls: BullMQ takes a job without a
 * priority before any prioritized one. With thousands of async orders pending, their due polls would
 * otherwise stand in line before every new sync order (whose caller may be waiting on ?wait=) and every
 * async creation (docs/BENCHMARKS.md, scale). A poll that waits a little longer changes nothing: the pull
 * request is still there, and the unknown-outcome window counts from the partner call, not from the poll.
 */
export const BACKGROUND_PRIORITY = 1_000;
/**
 * A poll or re-check that has waited PARTNER_POLL_MAX_YIELD_MS in the queue (the worker's poll ager): before every
 * creation but a client's first (fair-share.ts), so new orders hold a poll back for a bounded time only.
 */
export const AGED_PRIORITY = 1;
