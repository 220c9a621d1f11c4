import type { ServiceConfig } from '@cardpull/config';
import type { AttemptState, OrderStatus, OrderStep, PullMode } from '@cardpull/db';
import type { Card, PartnerOutcome, PullRequest } from '@cardpull/partner-client';
import type { AskStep } from '@cardpull/orders';

/** The settings the decision reads (ARCHITECTURE.md "Settings"; the spec's guidance as defaults). */
export type DecisionTimings = Pick<
  ServiceConfig,
  | 'SYNC_RETRY_FIRST_DELAY_MS'
  | 'SYNC_RETRY_INTERVAL_MS'
  | 'RETRY_MIN_DELAY_MS'
  | 'ASYNC_POLL_FIRST_DELAY_MS'
  | 'ASYNC_POLL_INTERVAL_MIN_MS'
  | 'ASYNC_POLL_INTERVAL_MAX_MS'
  | 'UNKNOWN_OUTCOME_WINDOW_MS'
  | 'UNKNOWN_OUTCOME_MAX_INTERVAL_MS'
  | 'PULL_REQUEST_SETTLE_MS'
  | 'ASYNC_MAX_ATTEMPTS'
  | 'AWAIT_RECHECK_INTERVAL_MS'
  | 'AWAIT_DEADLINE_MS'
  | 'CIRCUIT_RETRY_MS'
>;

/** The partner call whose answer is decided: POST /cards, POST /pull_requests or GET /pull_requests/:id (ORDER_STEPS' `asks`). */
export type Sent = AskStep;

export interface OrderFacts {
  mode: PullMode;
  giftCardCode: string;
  amount: number;
  status: OrderStatus;
  errorCode: string | null;
  errorMessage: string | null;
  waitDeadline: Date | null;
}

/** The attempt (request ID) the call carried, as it was BEFORE the call (the lease marks it `sent` meanwhile). */
export interface AttemptFacts {
  requestId: string;
  seq: number;
  state: AttemptState;
  partnerStatus: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** Set once the ID has had an unknown outcome (and the start of its window): the partner may hold a pull under it. */
  unknownSince: Date | null;
  /** First 404 of the current run of 404s on GET /pull_requests/:id. */
  notFoundSince: Date | null;
  firstSentAt: Date | null;
  createdAt: Date;
}

/** A call made by a worker that stopped before recording its answer: an unknown outcome, as of `sentAt`. */
export interface Interrupted {
  kind: 'interrupted';
  sentAt: Date;
  /** The lease owner (worker run) that made the call, when known: named on the order's timeline. */
  by?: string | null;
}

/** What an interrupted call was, in words: the timeline's message and the log line's. */
export function interruptedMessage(a: Interrupted): string {
  return `the worker that made the call${a.by ? ` (${a.by})` : ''} at ${a.sentAt.toISOString()} stopped before recording its answer`;
}

export type Answer = PartnerOutcome<Card> | PartnerOutcome<PullRequest> | Interrupted;

export interface DecisionInput {
  order: OrderFacts;
  attempt: AttemptFacts;
  sent: Sent;
  answer: Answer;
  /** Now, by the database's clock (ms): every deadline that several processes read is measured by it. */
  now: number;
  timings: DecisionTimings;
  /** The reconciler asks (the order has no step of its own: needs_attention, failed or completed). */
  reconciling?: boolean;
  /** In [0, 1): where the poll interval falls between its min and max (jitter). */
  random?: number;
}

/** Changes to the attempt. `unknownSince`/`notFoundSince`: 'start' keeps a start already recorded. */
export interface AttemptPatch {
  state?: AttemptState;
  partnerStatus?: string | null;
  error?: { code: string; message: string } | null;
  unknownSince?: 'start' | 'restart' | Date;
  notFoundSince?: 'start' | 'clear';
}

export interface Step {
  step: OrderStep;
  /** From now, by the database's clock. */
  delayMs: number;
}

export type Decision =
  /**
   * A card: stored whatever else is true (the order's card, a surplus card, or a mismatch: see the card
   * store). `attempt.state` is `succeeded`, or stays `unknown` when the card came under another request ID.
   */
  | {
      kind: 'store_card';
      rule: Rule;
      card: Card;
      mismatch: string | null;
      attempt: AttemptPatch & { state: AttemptState };
      /**
       * The partner answered with a pull request of ANOTHER request ID, carrying this card: the card is that
       * ID's. When the ID is one of ours the card is stored as its answer (on its order), and `then` applies to
       * the order asked about; otherwise it is stored on the order asked about, as a mismatch.
       */
      answeredFor?: { requestId: string; then: Decision };
    }
  /** The order moves (guarded by its step): a new status, a next step (null: none), maybe a new request ID. */
  | {
      kind: 'transition';
      rule: Rule;
      status?: OrderStatus;
      error?: { code: string; message: string } | null;
      /** 'start': the waiting deadline (AWAIT_DEADLINE_MS) starts now unless one runs. */
      waitDeadline?: 'start';
      next: Step | null;
      attempt?: AttemptPatch;
      /** Mint a new request ID (committed by the same statement, before any call carries it: invariant 1). */
      newAttempt?: true;
      circuit?: { code: string; message: string };
      event?: { type: string; detail?: Record<string, unknown> };
    }
  /**
   * The order stays at its step: the same job runs again after `delayMs` (the reconciler's next pass, for
   * the reconciler). `note`: what the call taught about the attempt, written without moving the order.
   */
  | { kind: 'stay'; rule: Rule; delayMs: number; note?: AttemptPatch; circuit?: { code: string; message: string } };

/** The rows of the classification table (docs/ARCHITECTURE.md), as named in code, logs and tests. */
export type Rule =
  | 'card'
  | 'business_error'
  | 'business_error_not_proof'
  | 'credentials'
  | 'unknown_outcome'
  | 'unknown_window_expired'
  | 'pull_request_pending'
  | 'pull_request_error'
  | 'request_id_used'
  | 'request_id_mismatch'
  | 'never_reached'
  | 'create_again'
  | 'not_found_settling'
  | 'not_found_after_seen'
  | 'wait_deadline'
  | 'still_waiting'
  | 'condition_cleared'
  | 'reconcile_resumed'
  | 'reconcile_unchanged';
