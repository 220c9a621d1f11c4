import { request } from 'undici';
import { sleep } from './infra';

/**
 * The orders of the run: POST /v1/orders at a steady rate, mixed sync and async, across the catalog with
 * valid amounts. A POST that fails because the API is momentarily unreachable or answers 5xx (a Postgres
 * restart) is sent again with the SAME Idempotency-Key; an order counts as created once the API answered
 * 202 (or 200: the replay of one created by an earlier try whose answer was lost).
 */

export type Mode = 'sync' | 'async';

export interface PlannedOrder {
  index: number;
  key: string;
  giftCardCode: string;
  amount: number;
  mode: Mode;
}

/** The simulator's catalog (apps/partner-sim/README.md) with amounts each gift card accepts. */
const CATALOG: { code: string; amount: () => number }[] = [
  { code: 'ACME-BOOKS-FIXED', amount: () => pick([1000, 2500, 5000, 10000]) },
  { code: 'NOVA-GAMES-FREE', amount: () => 100 * (5 + Math.floor(Math.random() * 96)) }, // 500..10000 step 100
  { code: 'EURO-TRAVEL-REGION', amount: () => pick([2000, 5000]) },
  { code: 'FAST-FREE', amount: () => 100 + Math.floor(Math.random() * 9_901) }, // 100..10000 step 1
];
export const FIXED_STOCK_CODE = 'ACME-BOOKS-FIXED';
/**
 * One facial value kept scarce while the faults are on (refilled to `refill` units every `everyMs`, then
 * plenty once they stop): orders for it meet out_of_stock on first sends (they wait, then go on with a new
 * request ID) and, with a lost answer and business_first, on re-sends whose first send took a unit (they
 * wait on the SAME request ID).
 */
export const SCARCE = { code: FIXED_STOCK_CODE, facialValue: 10000, refill: 2, everyMs: 3_000 } as const;

const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

export function planOrders(count: number, asyncShare: number, runId: string): PlannedOrder[] {
  const asyncCount = Math.round(count * asyncShare);
  // Exactly asyncCount async orders, spread at random over the run.
  const modes: Mode[] = Array.from({ length: count }, (_, i) => (i < asyncCount ? 'async' : 'sync'));
  for (let i = modes.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [modes[i], modes[j]] = [modes[j]!, modes[i]!];
  }
  return modes.map((mode, index) => {
    const item = CATALOG[index % CATALOG.length]!;
    return { index, key: `chaos-${runId}-${index}`, giftCardCode: item.code, amount: item.amount(), mode };
  });
}

export interface IntakeFailure {
  key: string;
  status: number | null;
  error: string;
}

export interface LoadState {
  sent: number;
  created: number;
  /** POSTs sent again with the same key after a network error or a 5xx. */
  retries: number;
  /** The key's order id, once created. */
  orderIds: Map<string, string>;
  modeOf: Map<string, Mode>;
  /** 4xx answers (our orders are valid: a bug or a misconfiguration). */
  rejected: IntakeFailure[];
  /** Orders never created within the intake deadline. */
  gaveUp: IntakeFailure[];
  done: boolean;
}

export function newLoadState(): LoadState {
  return { sent: 0, created: 0, retries: 0, orderIds: new Map(), modeOf: new Map(), rejected: [], gaveUp: [], done: false };
}

export interface LoadOptions {
  apiUrl: string;
  apiKey: string;
  rate: number;
  /** Per order: keep retrying the same key this long before giving up. */
  intakeDeadlineMs?: number;
  /** At most this many POSTs in flight. */
  maxInFlight?: number;
}

/** Sends every planned order at `rate` per second; resolves when each one is created or given up. */
export async function sendOrders(plan: PlannedOrder[], state: LoadState, opts: LoadOptions): Promise<void> {
  const started = Date.now();
  const maxInFlight = opts.maxInFlight ?? 200;
  let inFlight = 0;
  const all: Promise<void>[] = [];
  for (const order of plan) {
    const due = started + (order.index * 1000) / opts.rate;
    if (due > Date.now()) await sleep(due - Date.now());
    while (inFlight >= maxInFlight) await sleep(10);
    inFlight++;
    state.sent++;
    state.modeOf.set(order.key, order.mode);
    all.push(createOrder(order, state, opts).finally(() => inFlight--));
  }
  await Promise.all(all);
  state.done = true;
}

async function createOrder(order: PlannedOrder, state: LoadState, opts: LoadOptions): Promise<void> {
  const deadline = Date.now() + (opts.intakeDeadlineMs ?? 180_000);
  const body = JSON.stringify({ gift_card_code: order.giftCardCode, amount: order.amount, mode: order.mode });
  let last: IntakeFailure = { key: order.key, status: null, error: 'not sent' };
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      state.retries++;
      await sleep(Math.min(2_000, 250 * attempt));
    }
    try {
      const res = await request(`${opts.apiUrl}/v1/orders`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json', 'idempotency-key': order.key },
        headersTimeout: 15_000,
        bodyTimeout: 15_000,
      });
      const text = await res.body.text();
      if (res.statusCode === 202 || res.statusCode === 200) {
        const id = (JSON.parse(text) as { order: { id: string } }).order.id;
        state.orderIds.set(order.key, id);
        state.created++;
        return;
      }
      last = { key: order.key, status: res.statusCode, error: text.slice(0, 300) };
      if (res.statusCode < 500 && res.statusCode !== 429) {
        state.rejected.push(last);
        return;
      }
    } catch (error) {
      last = { key: order.key, status: null, error: (error as Error).message };
    }
    if (Date.now() > deadline) {
      state.gaveUp.push(last);
      return;
    }
  }
}

/** Money the partner needs for the plan (currency units), with a wide margin for retried async pulls. */
export function balanceNeeded(plan: PlannedOrder[]): number {
  return Math.ceil((plan.reduce((sum, o) => sum + o.amount, 0) / 100) * 5 + 100_000);
}
