import type { PartnerEndpoint } from './outcome';

/**
 * The kinds of partner call that limits, pauses and timeouts are set for (the simulator's limit kinds):
 * `create` issues cards (POST /cards, POST /pull_requests), `poll` reads a pull request by its request ID,
 * `read` is everything else (catalog, inventory, balance, GET /cards/:id).
 */
export type CallKind = 'create' | 'poll' | 'read';
export const CALL_KINDS: readonly CallKind[] = ['create', 'poll', 'read'];

export const KIND_OF: Record<PartnerEndpoint, CallKind> = {
  createCard: 'create',
  createPullRequest: 'create',
  getPullRequest: 'poll',
  listGiftCards: 'read',
  getGiftCard: 'read',
  getCard: 'read',
  getInventory: 'read',
  getBalance: 'read',
};

/** What a permit's holder reports once its call is over: whether it was sent, and what the partner said about load. */
export interface CallResult {
  /** False when the call was never sent (the permit's token is given back). */
  sent: boolean;
  httpStatus?: number;
  /** The partner's Retry-After on a 429 or 503, in ms. */
  retryAfterMs?: number;
}

/** Leave to make one call of a kind: a token of its rate and a place among the calls in flight. */
export interface CallPermit {
  readonly kind: CallKind;
  /** Frees the place in flight and reports the answer (a 429 or 503 pauses or slows the kind fleet-wide). Once. */
  done(result: CallResult): void;
  /**
   * Right before the call is recorded as sent, when time has passed since the permit was given (waiting
   * for a database connection): 0 if the call may still go, else how long a pause the partner asked for
   * since then still lasts (the call must not go: give the permit back and come again after it). A number
   * at once when nothing needs asking (no limit known, or a permit a few ms old): the call's statement then
   * goes on the connection it waited for without a turn of the event loop's queue in between.
   */
  recheck(): number | Promise<number>;
  /**
   * When this permit last asked the fleet's limits (acquired or re-checked), in ms since the epoch, taken
   * before the question went to Redis: a pause set after this moment was seen, and held the call back.
   * What a send is measured by (a call already past its check may still arrive during a pause).
   */
  readonly checkedAt?: number;
}

/** No permit in time: when to ask again, and why (a pause the partner asked for, the rate, calls in flight, or yielding to creations). */
export interface HeldBack {
  heldBack: true;
  waitMs: number;
  reason: 'paused' | 'rate' | 'in_flight' | 'yield';
}

export interface AcquireOptions {
  /** How long to wait for a permit before answering HeldBack (0: ask once). */
  maxWaitMs: number;
  /**
   * A poll or re-check that must not wait behind creations any longer (close to its order's deadline, or
   * it has yielded for PARTNER_POLL_MAX_YIELD_MS already). Creations never yield.
   */
  urgent?: boolean;
  /** When this call was first held back (ms since epoch): how long it has yielded already. */
  heldSince?: number;
  /**
   * Among this process's calls of the same kind held back by the limits, lower goes first (the job's
   * queue priority: a client's fair share). Without it, a call takes its chance with the others.
   */
  rank?: number;
}

/**
 * The fleet's shared limits on partner calls (libs/traffic implements it on Redis). The partner client asks
 * it before each call it is not given a permit for; the step runner asks it before it leases an order, so a
 * call held back never counts as sent.
 */
export interface CallGate {
  acquire(kind: CallKind, options: AcquireOptions): Promise<CallPermit | HeldBack>;
}

export const isHeldBack = (x: CallPermit | HeldBack): x is HeldBack => 'heldBack' in x;
