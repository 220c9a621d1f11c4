import { Client } from 'pg';
import type { LedgerView } from '@cardpull/sim-contract';
import { checkLedger } from './ledger-check';

export interface DbSnapshot {
  orders: { id: string; status: string; next_step: string | null; next_step_at: Date | null; error_code: string | null; error_message: string | null; card_id: string | null }[];
  attempts: {
    request_id: string;
    order_id: string;
    seq: number;
    state: string;
    created_at: Date;
    call_count: number;
    /** Set once a send of the ID had an unknown outcome: a business error after that is not the partner's word on the ID. */
    unknown_since: Date | null;
    error_code: string | null;
    partner_status: string | null;
    /** An operator's audited "declare dead" (null when the column does not exist yet). */
    declared_dead_at: Date | null;
  }[];
  cards: { id: string; order_id: string; request_id: string; partner_card_id: string; role: string; code_enc: Buffer; pin_enc: Buffer | null }[];
}

/** Orders, attempts and cards as one consistent picture (one repeatable-read transaction), even while workers run. */
export async function snapshot(databaseUrl: string): Promise<DbSnapshot> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    await pg.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const orders = await pg.query('SELECT id, status, next_step, next_step_at, error_code, error_message, card_id FROM orders');
    // declared_dead_at through to_jsonb: the same query works before and after the migration that adds it.
    const attempts = await pg.query(
      `SELECT request_id, order_id, seq, state::text AS state, created_at, call_count, unknown_since, error_code, partner_status,
              (to_jsonb(a) ->> 'declared_dead_at')::timestamptz AS declared_dead_at
         FROM attempts a ORDER BY order_id, seq`,
    );
    const cards = await pg.query('SELECT id, order_id, request_id, partner_card_id, role::text AS role, code_enc, pin_enc FROM cards');
    await pg.query('COMMIT');
    return { orders: orders.rows, attempts: attempts.rows, cards: cards.rows };
  } finally {
    await pg.end();
  }
}

type Attempt = DbSnapshot['attempts'][number];

/** The business errors that are the partner's word on a request ID when they answer its first send. */
export const DEFINITIVE_BUSINESS_CODES: readonly string[] = ['gift_card_not_found', 'invalid_amount', 'out_of_stock', 'not_enough_funds'];

/**
 * Whether an attempt is dead by the partner's own word about it, or by an operator: async status `error`;
 * a definitive business error answered to its first send (no send of it had an unknown outcome); an
 * operator's audited declaration. Nothing else (a stored answer read off inventory or balance, 404s after a
 * 422 "already used") may end a request ID.
 */
export function deadByWordOrOperator(a: Pick<Attempt, 'partner_status' | 'unknown_since' | 'error_code' | 'declared_dead_at'>): boolean {
  if (a.declared_dead_at !== null && a.declared_dead_at !== undefined) return true;
  if (a.partner_status === 'error') return true;
  return (a.unknown_since === null || a.unknown_since === undefined) && a.error_code !== null && DEFINITIVE_BUSINESS_CODES.includes(a.error_code);
}

/** A request ID declared dead (failed_definitive) without the partner's word or an operator's. */
export const declaredDeadWithoutWord = (a: Pick<Attempt, 'state' | 'partner_status' | 'unknown_since' | 'error_code' | 'declared_dead_at'>): boolean =>
  a.state === 'failed_definitive' && !deadByWordOrOperator(a);

/** How long a suite's last check reads again while it finds a violation (see expectInvariants). */
const SETTLE_MS = 10_000;

/**
 * checkInvariants against a stack's database and its simulator's ledger, as an expectation (a suite's last
 * check). The service may still be working when a suite ends (an order the background re-check resumed, a
 * step retried): a card the partner issued just after the database was read is on its way to its store, not
 * lost. So a reading that finds a violation is taken again, for SETTLE_MS at most, until one finds none; a
 * violation that lasts (a card really lost never appears) fails with what the last reading found.
 */
export async function expectInvariants(stack: { db: { url: string }; sim: { control: { ledger(): Promise<LedgerView> } } }): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  let problems = checkInvariants(await snapshot(stack.db.url), await stack.sim.control.ledger());
  while (problems.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    problems = checkInvariants(await snapshot(stack.db.url), await stack.sim.control.ledger());
  }
  expect(problems).toEqual([]);
  // The money ledger against the orders (issue 24): it moves in the same transactions, so it agrees at any moment.
  expect((await checkLedger(stack.db.url)).problems).toEqual([]);
}

/**
 * The invariants of ARCHITECTURE.md checked from the outside: the simulator's ledger (what the partner saw
 * and issued) against our database. Returns the violations (empty when all hold), so a test can show them.
 */
export function checkInvariants(db: DbSnapshot, ledger: LedgerView): string[] {
  const problems: string[] = [];
  const attemptsById = new Map(db.attempts.map((a) => [a.request_id, a]));
  const ours = (requestId: string | null) => requestId !== null && attemptsById.has(requestId);

  // 1. Persist before call: every request ID the partner received was in Postgres before the first call with it.
  const firstCall = new Map<string, number>();
  for (const r of ledger.requests) {
    if (r.method !== 'POST' || !r.request_id) continue;
    const at = Date.parse(r.at);
    if (!firstCall.has(r.request_id) || at < firstCall.get(r.request_id)!) firstCall.set(r.request_id, at);
  }
  for (const [requestId, at] of firstCall) {
    const attempt = attemptsById.get(requestId);
    if (!attempt) problems.push(`invariant 1: the partner received request ID ${requestId} that is not in our database`);
    else if (attempt.created_at.getTime() > at) problems.push(`invariant 1: request ID ${requestId} was committed after its first call`);
  }

  // 3. Cards: every card issued for our request IDs is stored, once, on its order; nothing else is stored.
  const ledgerCards = ledger.cards.filter((c) => ours(c.request_id));
  const stored = new Map(db.cards.map((c) => [c.partner_card_id, c]));
  for (const c of ledgerCards) {
    const s = stored.get(c.id);
    if (!s) problems.push(`invariant 3: card ${c.id} issued for request ID ${c.request_id} is not stored`);
    else if (s.request_id !== c.request_id) problems.push(`invariant 3: card ${c.id} stored under another request ID`);
  }
  for (const c of db.cards) {
    if (!ledgerCards.some((l) => l.id === c.partner_card_id)) problems.push(`invariant 3: stored card ${c.partner_card_id} was never issued for our request IDs`);
  }
  const cardsPerOrder = new Map<string, number>();
  for (const c of ledgerCards) {
    const orderId = attemptsById.get(c.request_id)!.order_id;
    cardsPerOrder.set(orderId, (cardsPerOrder.get(orderId) ?? 0) + 1);
  }
  for (const [orderId, n] of cardsPerOrder) if (n > 1) problems.push(`invariant 3: order ${orderId} was issued ${n} cards`);
  const requestIdsWithCards = new Set(ledgerCards.map((c) => c.request_id));
  if (requestIdsWithCards.size !== ledgerCards.length) problems.push('invariant 3: a request ID was issued two cards');
  // The order's card and its order's completion commit together: the order's card is on a completed order,
  // and no completed order is without its card (once completed, nothing would store it any more). Other
  // cards of an order (surplus, mismatch) may be on any order: a card the partner billed is never dropped.
  const orderById = new Map(db.orders.map((o) => [o.id, o]));
  const cardById = new Map(db.cards.map((c) => [c.id, c]));
  for (const c of db.cards) {
    const order = orderById.get(c.order_id);
    if (c.role !== 'order') continue;
    if (order?.status !== 'completed') problems.push(`invariant 3: card ${c.partner_card_id} is the card of order ${c.order_id}, which is ${order?.status ?? 'missing'}`);
    else if (order.card_id !== c.id) problems.push(`invariant 3: card ${c.partner_card_id} is marked the card of order ${c.order_id}, which has another`);
  }
  for (const o of db.orders) {
    if (o.status !== 'completed') continue;
    const card = o.card_id ? cardById.get(o.card_id) : undefined;
    if (!card || card.order_id !== o.id || card.role !== 'order') problems.push(`invariant 3: order ${o.id} is completed without its card`);
  }

  // 2. Same ID until the partner's word on it (or an operator's): an order's attempts before the last are all
  // failed_definitive, each on the partner's word about that ID or by an operator's declaration.
  const byOrder = new Map<string, DbSnapshot['attempts']>();
  for (const a of db.attempts) byOrder.set(a.order_id, [...(byOrder.get(a.order_id) ?? []), a]);
  for (const [orderId, list] of byOrder) {
    const attempts = [...list].sort((x, y) => x.seq - y.seq);
    for (const a of attempts.slice(0, -1)) {
      if (a.state !== 'failed_definitive') problems.push(`invariant 2: order ${orderId} got a new request ID after ${a.request_id} ended ${a.state}`);
      else if (!deadByWordOrOperator(a)) {
        problems.push(
          `invariant 2: order ${orderId}: new request ID without the partner's word or an operator's: ${a.request_id} ended failed_definitive on ` +
            `${a.error_code ?? 'no error code'} (partner status ${a.partner_status ?? 'none'}${a.unknown_since ? ', after an unknown outcome' : ''})`,
        );
      }
    }
  }

  // 6. Nothing silently stuck: terminal, or a scheduled next step, or needs_attention with its reason.
  for (const o of db.orders) {
    if (o.status === 'completed' || o.status === 'failed') continue;
    if (o.status === 'needs_attention') {
      if (!o.error_message) problems.push(`invariant 6: order ${o.id} needs attention without a reason`);
    } else if (!o.next_step || !o.next_step_at) {
      problems.push(`invariant 6: order ${o.id} is ${o.status} with no next step`);
    }
  }

  // 7. No card code or PIN stored in plain text.
  for (const c of ledgerCards) {
    const s = stored.get(c.id);
    if (!s) continue;
    if (s.code_enc.includes(Buffer.from(c.code))) problems.push(`invariant 7: card ${c.id} code stored in plain text`);
    if (c.pin_code && s.pin_enc?.includes(Buffer.from(c.pin_code))) problems.push(`invariant 7: card ${c.id} PIN stored in plain text`);
  }
  return problems;
}

/** Invariant 7 in logs: no code or PIN of any issued card appears in the text. */
export function secretsIn(text: string, ledger: LedgerView): string[] {
  const found: string[] = [];
  for (const c of ledger.cards) {
    if (text.includes(c.code)) found.push(`card ${c.id}: code`);
    if (c.pin_code && c.pin_code.length >= 6 && text.includes(`"${c.pin_code}"`)) found.push(`card ${c.id}: PIN`);
  }
  return found;
}
