import type { OrderStep, PullMode } from '@cardpull/db';
import type { CallKind } from '@cardpull/partner-client';

/**
 * What each step of an order is, in one table: everything else (the lease's SQL, the queue's priorities,
 * the processor's job list, the step unions of the decision) is derived from it.
 *  - `sends`: the step sends the request ID to the partner in a call that can issue a card (POST /cards,
 *    POST /pull_requests). Such a call is made only under the order's lease: one sender per ID (invariant 2).
 *  - `asks`: the step asks the partner about the order's request ID (a send, or GET /pull_requests/:id);
 *    its answer is decided by the classification table (decide).
 *  - `call`: which of the fleet's partner limits the step's call is charged to.
 *  - `background`: its job waits behind creations in the queue (polls and re-checks).
 */
interface StepFacts {
  mode: PullMode | null;
  sends: boolean;
  asks: boolean;
  call: CallKind;
  background: boolean;
  endpoint: string;
}

export const ORDER_STEPS = {
  sync_call: { mode: 'sync', sends: true, asks: true, call: 'create', background: false, endpoint: 'POST /cards' },
  async_create: { mode: 'async', sends: true, asks: true, call: 'create', background: false, endpoint: 'POST /pull_requests' },
  async_poll: { mode: 'async', sends: false, asks: true, call: 'poll', background: true, endpoint: 'GET /pull_requests/:request_id' },
  resume_check: { mode: null, sends: false, asks: false, call: 'read', background: true, endpoint: 'GET /balance or GET /inventories/:code' },
} as const satisfies Record<OrderStep, StepFacts>;

type Steps = typeof ORDER_STEPS;
/** Steps that send a request ID in a call that can issue a card (under the order's lease). */
export type SendStep = { [S in OrderStep]: Steps[S]['sends'] extends true ? S : never }[OrderStep];
/** Steps that ask the partner about the order's request ID (their answer goes through decide). */
export type AskStep = { [S in OrderStep]: Steps[S]['asks'] extends true ? S : never }[OrderStep];

export const ORDER_STEP_NAMES = Object.keys(ORDER_STEPS) as OrderStep[];
export const SEND_STEPS = ORDER_STEP_NAMES.filter((s) => ORDER_STEPS[s].sends) as SendStep[];
/** `'sync_call', 'async_create'`: the steps the lease statement takes, as SQL literals. */
export const SEND_STEPS_SQL = SEND_STEPS.map((s) => `'${s}'`).join(', ');

export const isSendStep = (step: string | null | undefined): step is SendStep => !!step && (SEND_STEPS as string[]).includes(step);
export const isBackgroundStep = (step: string): boolean => step in ORDER_STEPS && ORDER_STEPS[step as OrderStep].background;

/** A new order's step, and an order's step with a new request ID: the send of its mode. */
export const firstStep = (mode: PullMode): SendStep => (mode === 'sync' ? 'sync_call' : 'async_create');
/** How the order's request ID is asked about again: a sync ID is sent again, an async one read. */
export const askStep = (mode: PullMode): 'sync_call' | 'async_poll' => (mode === 'sync' ? 'sync_call' : 'async_poll');
