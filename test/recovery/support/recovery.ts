import { Client } from 'pg';
import { waitFor, type LedgerView } from '@cardpull/testing';
import { idemKey, type Stack } from '../../support/stack';

/**
 * What the recovery suites share: placing orders through the in-process API, reading the simulator's
 * ledger (the partner's ground truth) and our database, and one summary line per test for the issue note.
 */

/** Unlimited stock, any amount from 100 to 100000: no test here can run out of cards. */
export const GIFT_CARD = 'FAST-FREE';

export type Mode = 'sync' | 'async';
export type LedgerRequest = LedgerView['requests'][number];
export type LedgerCard = LedgerView['cards'][number];

export interface OrderView {
  id: string;
  status: string;
  mode: Mode;
  attempts: { request_id: string; kind: string; state: string; call_count: number }[];
  card: { id: string; code: string; pin_code: string | null; amount: number; gift_card_code: string } | null;
  error: { code: string; message: string } | null;
  completed_at: string | null;
}

export async function placeOrder(stack: Stack, mode: Mode, amount = 1000): Promise<OrderView> {
  const res = await stack.call<{ order: OrderView }>('POST', '/v1/orders', {
    body: { gift_card_code: GIFT_CARD, amount, mode },
    headers: { 'idempotency-key': idemKey(`recovery-${mode}`) },
  });
  if (res.status !== 202) throw new Error(`POST /v1/orders answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.order;
}

/** The order as the shop (every scope, so the card's code and PIN in clear) reads it. */
export async function getOrder(stack: Stack, id: string): Promise<OrderView> {
  const res = await stack.call<{ order: OrderView }>('GET', `/v1/orders/${id}`);
  if (res.status !== 200) {
    // A 500's cause is only in the API's log (captured in this process): show the last one.
    const logged = res.status >= 500 ? stack.logs.lines.filter((l) => l.includes('"unhandled error"')).slice(-1)[0] : undefined;
    throw new Error(`GET /v1/orders/${id} answered ${res.status}${logged ? `; the API logged: ${logged.slice(0, 500)}` : ''}`);
  }
  return res.body.order;
}

const ENDED = ['completed', 'failed', 'needs_attention'];

/** Until the order is completed; fails at once if it ends otherwise (failed, needs_attention). */
export async function waitForCompleted(stack: Stack, id: string, timeoutMs = 20_000): Promise<OrderView> {
  const order = await waitFor(`order ${id} to complete`, async () => {
    const o = await getOrder(stack, id);
    return ENDED.includes(o.status) ? o : null;
  }, timeoutMs, 50);
  if (order.status !== 'completed') throw new Error(`order ${id} ended ${order.status}: ${JSON.stringify(order.error)}`);
  return order;
}

/** Until every order of the list has ended (completed, failed or needs_attention); returns them as the API shows them. */
export async function waitForAllEnded(stack: Stack, ids: string[], timeoutMs: number): Promise<OrderView[]> {
  let pending = [...ids];
  await waitFor(
    `${ids.length} orders to end`,
    async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ id: string; status: string }>('SELECT id, status FROM orders WHERE id = ANY($1)', [pending]));
      pending = rows.filter((r) => !ENDED.includes(r.status)).map((r) => r.id);
      return pending.length === 0;
    },
    timeoutMs,
    200,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}; still pending: ${pending.length}\n${await describeOrders(stack, pending.slice(0, 3))}`);
  });
  // Callers assert that every one is completed (and show the others). A few reads at a time: the API's pool
  // (DATABASE_POOL_SIZE 8) waits at most 5 s for a connection, and 120 reads at once on a loaded machine
  // (this process is the API, the simulator and the client) could wait past that: a 500.
  const orders: OrderView[] = [];
  for (let i = 0; i < ids.length; i += 8) orders.push(...(await Promise.all(ids.slice(i, i + 8).map((id) => getOrder(stack, id)))));
  return orders;
}

/**
 * For failure messages: where each order stands in Postgres (step, due time, lease, timeline) and what
 * Redis holds for its current step's job (fixed id `<order id>-<step_seq>`).
 */
export async function describeOrders(stack: Stack, ids: string[]): Promise<string> {
  const out: string[] = [];
  for (const id of ids) {
    const { order, events } = await withDb(stack, async (db) => ({
      order: (await db.query('SELECT status, next_step, next_step_at, step_seq, lease_owner, lease_expires_at FROM orders WHERE id = $1', [id])).rows[0],
      events: (await db.query('SELECT at, type, actor, detail FROM order_timeline WHERE order_id = $1 ORDER BY at, id NULLS LAST', [id])).rows,
    }));
    const jobKey = `${stack.redis.prefix}:orders:${id}-${order?.step_seq}`;
    const job = await stack.redis.client.hgetall(jobKey);
    const inSets: string[] = [];
    for (const set of ['wait', 'active', 'paused']) {
      const list = await stack.redis.client.lrange(`${stack.redis.prefix}:orders:${set}`, 0, -1);
      if (list.includes(`${id}-${order?.step_seq}`)) inSets.push(set);
    }
    for (const set of ['delayed', 'completed', 'failed', 'prioritized']) {
      if ((await stack.redis.client.zscore(`${stack.redis.prefix}:orders:${set}`, `${id}-${order?.step_seq}`)) !== null) inSets.push(set);
    }
    out.push(
      `order ${id}: ${JSON.stringify(order)}`,
      `  job ${id}-${order?.step_seq}: ${Object.keys(job).length ? `in ${inSets.join(',') || 'no list'}, ${JSON.stringify({ name: job.name, returnvalue: job.returnvalue, failedReason: job.failedReason, attemptsMade: job.atm })}` : 'absent'}`,
      ...events.map((e: { at: Date; type: string; actor: string; detail: unknown }) => `  ${e.at.toISOString()} ${e.type} ${e.actor} ${JSON.stringify(e.detail)}`),
    );
  }
  return out.join('\n');
}

/** Runs `fn` with a short-lived connection to the stack's own database. */
export async function withDb<T>(stack: Stack, fn: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: stack.db.url });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

export interface DbPicture {
  attempts: { order_id: string; request_id: string; seq: number; call_count: number; state: string }[];
  cards: { order_id: string; request_id: string; partner_card_id: string }[];
  events: { order_id: string; type: string; actor: string; request_id: string | null; detail: Record<string, unknown> | null }[];
}

/** Every attempt, card and timeline entry of the stack's database. */
export function dbPicture(stack: Stack): Promise<DbPicture> {
  return withDb(stack, async (db) => ({
    attempts: (await db.query('SELECT order_id, request_id, seq, call_count, state FROM attempts ORDER BY order_id, seq')).rows,
    cards: (await db.query('SELECT order_id, request_id, partner_card_id FROM cards')).rows,
    events: (await db.query('SELECT order_id, type, actor, request_id, detail FROM order_timeline ORDER BY at, id NULLS LAST')).rows,
  }));
}

/** The POSTs (sync pull or pull request creation) that carried `requestId`, in arrival order. */
export const postsOf = (ledger: LedgerView, requestId: string): LedgerRequest[] =>
  ledger.requests.filter((r) => r.method === 'POST' && r.request_id === requestId);

export const cardsOf = (ledger: LedgerView, requestId: string): LedgerCard[] => ledger.cards.filter((c) => c.request_id === requestId);

/** Resolves when the partner has issued a card for `requestId` (the ledger's cards list). */
export function waitForCardIssued(stack: Stack, requestId: string, timeoutMs = 10_000): Promise<LedgerCard> {
  return waitFor(`the partner to issue a card for ${requestId}`, async () => cardsOf(await stack.sim.control.ledger(), requestId)[0], timeoutMs, 10);
}

/**
 * Invariant 5's "never one request ID sent twice at once", read from the partner's side. A POST is in
 * flight from its arrival (`at`) until the earlier of:
 *  - `finished_at`: the answer was written, or the connection closed without one (a reset fault, or our
 *    client giving up on a held answer, or a killed worker's socket closing);
 *  - `at + PARTNER_TIMEOUT_MS`: our client started its deadline before the request arrived, so it had
 *    given up by then at the latest, even if the partner notices the closed connection later or never
 *    (a `hang` fault holds the answer for two minutes; whatever it writes after our client left cannot
 *    reach anyone, so it is not a concurrent send).
 * Two POSTs of one request ID overlap when the later one arrived before the earlier one stopped.
 */
export function overlappingPosts(ledger: LedgerView, timeoutMs: number): { requestId: string; first: LedgerRequest; second: LedgerRequest }[] {
  const byId = new Map<string, LedgerRequest[]>();
  for (const r of ledger.requests) {
    if (r.method !== 'POST' || !r.request_id) continue;
    byId.set(r.request_id, [...(byId.get(r.request_id) ?? []), r]);
  }
  const overlaps: { requestId: string; first: LedgerRequest; second: LedgerRequest }[] = [];
  for (const [requestId, posts] of byId) {
    const sorted = [...posts].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    for (let i = 0; i < sorted.length; i++) {
      const first = sorted[i]!;
      const end = inFlightUntil(first, timeoutMs);
      for (const second of sorted.slice(i + 1)) {
        if (Date.parse(second.at) < end) overlaps.push({ requestId, first, second });
      }
    }
  }
  return overlaps;
}

/**
 * For failure messages: each request ID sent twice at once, with its POSTs (arrival..end, status) and its
 * order's timeline (event, reason, worker pid), so the report shows who sent what and why.
 */
export async function explainOverlaps(stack: Stack, overlaps: ReturnType<typeof overlappingPosts>, max = 3): Promise<object[]> {
  const ids = [...new Set(overlaps.map((o) => o.requestId))];
  const ledger = await stack.sim.control.ledger();
  return withDb(stack, (db) =>
    Promise.all(
      ids.slice(0, max).map(async (requestId) => {
        const { rows } = await db.query(
          `SELECT e.at, e.type, e.actor, e.detail->>'reason' AS reason FROM order_timeline e
           JOIN attempts a ON a.order_id = e.order_id WHERE a.request_id = $1 ORDER BY e.at, e.id NULLS LAST`,
          [requestId],
        );
        return {
          requestId,
          overlappingPairs: overlaps.filter((o) => o.requestId === requestId).length,
          posts: postsOf(ledger, requestId).map((p) => `${p.at.slice(11, 23)}..${p.finished_at?.slice(11, 23) ?? 'open'} ${p.status ?? 'no answer'}${p.fault ? ` (${p.fault})` : ''}`),
          timeline: rows.map((r: { at: Date; type: string; actor: string; reason: string | null }) =>
            `${r.at.toISOString().slice(11, 23)} ${r.type}${r.reason ? `(${r.reason})` : ''} by pid ${pidOfActor(r.actor) ?? r.actor}`),
        };
      }),
    ),
  ).then((list) => (ids.length > max ? [...list, { more: ids.length - max }] : list));
}

export function inFlightUntil(r: LedgerRequest, timeoutMs: number): number {
  const deadline = Date.parse(r.at) + timeoutMs;
  return r.finished_at ? Math.min(Date.parse(r.finished_at), deadline) : deadline;
}

/**
 * Worker ids are `worker:<pid>-<random>`: the pid of the process that wrote an event or holds a lease.
 * (Timelines written before the take stopped writing its `in_progress` event hold `worker:worker:<pid>-...`
 * there: both forms are read.)
 */
export const pidOfActor = (actor: string | null): number | null => {
  const m = /^(?:worker:)+(\d+)-/.exec(actor ?? '');
  return m ? Number(m[1]) : null;
};

/** One line per test for the issue note: `[recovery] <rule>: key=value ...`. */
export function summary(rule: string, figures: Record<string, string | number>): void {
  const parts = Object.entries(figures).map(([k, v]) => `${k}=${v}`);
  console.log(`[recovery] ${rule}: ${parts.join(' ')}`);
}

export const ms = (n: number) => `${Math.round(n)}ms`;

/**
 * The partner's cards against ours, for a batch of completed orders. Empty when: every request ID the
 * partner saw belongs to exactly one of our attempts (none made up, none shared by two orders), each order
 * got exactly one card from the partner, we stored exactly that one, and the API shows it.
 */
export function cardProblems(orders: OrderView[], ledger: LedgerView, db: DbPicture): string[] {
  const problems: string[] = [];
  const orderOf = new Map<string, string>();
  for (const a of db.attempts) {
    if (orderOf.has(a.request_id)) problems.push(`request ID ${a.request_id} belongs to two orders`);
    orderOf.set(a.request_id, a.order_id);
  }
  for (const r of ledger.requests) {
    if (r.request_id && !orderOf.has(r.request_id)) problems.push(`the partner saw ${r.method} ${r.path} with request ID ${r.request_id}, unknown to our database`);
  }
  const issuedTo = new Map<string, LedgerCard[]>();
  for (const c of ledger.cards) {
    const orderId = orderOf.get(c.request_id);
    if (!orderId) problems.push(`card ${c.id} issued for request ID ${c.request_id}, unknown to our database`);
    else issuedTo.set(orderId, [...(issuedTo.get(orderId) ?? []), c]);
  }
  for (const order of orders) {
    const issued = issuedTo.get(order.id) ?? [];
    const stored = db.cards.filter((c) => c.order_id === order.id);
    if (issued.length !== 1) problems.push(`order ${order.id}: the partner issued ${issued.length} cards`);
    if (stored.length !== 1) problems.push(`order ${order.id}: ${stored.length} cards stored`);
    if (issued.length === 1 && stored.length === 1 && stored[0]!.partner_card_id !== issued[0]!.id) {
      problems.push(`order ${order.id}: stored card ${stored[0]!.partner_card_id}, the partner issued ${issued[0]!.id}`);
    }
    if (issued.length === 1 && (order.card?.id !== issued[0]!.id || order.card?.code !== issued[0]!.code)) {
      problems.push(`order ${order.id}: the API shows card ${order.card?.id ?? 'none'}, the partner issued ${issued[0]!.id}`);
    }
  }
  const ledgerIds = new Set(ledger.cards.map((c) => c.id));
  for (const c of db.cards) if (!ledgerIds.has(c.partner_card_id)) problems.push(`stored card ${c.partner_card_id} was never issued by the partner`);
  return problems;
}

/**
 * The suite's FLUSHALL: every key of its prefix deleted in one step, as a real FLUSHALL does (a Lua script
 * runs alone). TestRedis.flush() deletes page by page while the service keeps writing, which is a
 * different failure (keys lost one by one, see lost-job.e2e-spec.ts).
 */
export async function flushAll(stack: Stack): Promise<number> {
  const script = `local keys = redis.call('KEYS', ARGV[1])
    local n = 0
    for i = 1, #keys, 1000 do n = n + redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end
    return n`;
  return Number(await stack.redis.client.eval(script, 0, `${stack.redis.prefix}:*`));
}

/** Jobs of the orders queue that are still to run: waiting, active, delayed or prioritized. */
export async function liveJobCount(stack: Stack): Promise<number> {
  const key = (k: string) => `${stack.redis.prefix}:orders:${k}`;
  const c = stack.redis.client;
  const [wait, active, delayed, prioritized] = await Promise.all([c.llen(key('wait')), c.llen(key('active')), c.zcard(key('delayed')), c.zcard(key('prioritized'))]);
  return wait + active + delayed + prioritized;
}
