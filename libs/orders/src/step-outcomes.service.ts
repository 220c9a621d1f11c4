import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import type { OrderStep } from '@cardpull/db';
import type { Card, DefinitiveCode } from '@cardpull/partner-client';
import { Vault, cardContext } from '@cardpull/vault';
import { PartnerCircuit } from './circuit.service';
import { newRequestId } from './ids';
import type { AttemptRow, OrderRow } from './order.types';
import { StepsRepository, type Transition } from './steps.repository';
import { syncRetryDelay, windowExpired } from './timings';

/** What the job that ran a step must do next with the queue. */
export type StepResult = (
  | { kind: 'done'; reason: string }
  | { kind: 'next'; orderId: string; stepSeq: number; step: OrderStep; at: Date }
  /** Run this same job again later; nothing changed in Postgres (a poll that learned nothing). */
  | { kind: 'delay'; until: Date; reason: string }
) & {
  /** Callback events the step's transition wrote (outbox), to be delivered now that it is committed. */
  callbacks?: string[];
};

/** An unknown outcome's reason: the client's (timeout, network, ...) or ours ('interrupted': the caller died). */
export interface UnknownOutcome {
  reason: string;
  message: string;
  httpStatus?: number;
}

/** Statuses of an attempt that prove the partner knows the pull request (ARCHITECTURE: 404 on such an ID is not "never created"). */
const ACKNOWLEDGED = new Set(['waiting', 'processing', 'success', 'error', 'exists']);
export const isAcknowledged = (a: AttemptRow): boolean => a.partnerStatus !== null && ACKNOWLEDGED.has(a.partnerStatus);

/**
 * Turns partner outcomes into order transitions, exactly per ARCHITECTURE.md's classification table.
 * Shared by the sync and async step handlers.
 */
@Injectable()
export class StepOutcomes {
  private readonly log = new Logger(StepOutcomes.name);
  readonly actor = `worker:${process.pid}-${randomUUID().slice(0, 8)}`;

  constructor(
    @Inject(SERVICE_CONFIG) readonly config: ServiceConfig,
    private readonly steps: StepsRepository,
    private readonly vault: Vault,
    private readonly circuit: PartnerCircuit,
  ) {}

  /** Invariant 3: seal the card and complete the order in one statement; a card is stored once. */
  async card(order: OrderRow, attempt: AttemptRow, card: Card, partnerStatus: string): Promise<StepResult> {
    const id = randomUUID();
    const code = this.vault.seal(card.code, cardContext(id, 'code'));
    const pin = card.pin_code ? this.vault.seal(card.pin_code, cardContext(id, 'pin')) : null;
    const expireAt = card.expire_at ? new Date(card.expire_at) : null;
    const result = await this.steps.transition({
      orderId: order.id,
      guard: 'not_completed',
      actor: this.actor,
      status: 'completed',
      next: null,
      error: null,
      attempt: { requestId: attempt.requestId, state: 'succeeded', partnerStatus, error: null },
      card: {
        id,
        requestId: attempt.requestId,
        partnerCardId: card.id,
        keyId: code.keyId,
        codeEnc: code.blob,
        pinEnc: pin?.blob ?? null,
        expireAt: expireAt && !Number.isNaN(expireAt.getTime()) ? expireAt : null,
        amount: card.amount,
        giftCardCode: card.gift_card_code,
        pdfUrl: card.pdf_url ?? null,
      },
      event: { type: 'completed', requestId: attempt.requestId, detail: { partner_card_id: card.id } },
    });
    if (!result.applied) {
      // Already completed: by this same card (a re-run, harmless) or, if it ever happened, by another one.
      this.log.warn({ orderId: order.id, requestId: attempt.requestId, partnerCardId: card.id }, 'card received for an order already completed');
      return { kind: 'done', reason: 'already completed' };
    }
    if (!result.cardStored) {
      this.log.error({ orderId: order.id, partnerCardId: card.id }, 'order completed but its card was not inserted (already stored?)');
    }
    return { kind: 'done', reason: 'completed', callbacks: result.callbackEventIds };
  }

  /**
   * A definitive business error ends this request ID. gift_card_not_found / invalid_amount fail the order;
   * out_of_stock / not_enough_funds park it until the partner can serve it (then a NEW request ID).
   */
  async definitive(order: OrderRow, attempt: AttemptRow, code: DefinitiveCode, message: string): Promise<StepResult> {
    const attemptPatch = { requestId: attempt.requestId, state: 'failed_definitive' as const, partnerStatus: code, error: { code, message } };
    if (code === 'gift_card_not_found' || code === 'invalid_amount') {
      return this.apply(order, {
        status: 'failed',
        next: null,
        error: { code, message },
        attempt: attemptPatch,
        event: { type: 'failed', detail: { code, message } },
      });
    }
    const now = Date.now();
    const deadline = order.waitDeadline ?? new Date(now + this.config.AWAIT_DEADLINE_MS);
    if (deadline.getTime() <= now) {
      return this.apply(order, {
        status: 'failed',
        next: null,
        error: { code, message: `${message} (still so at the waiting deadline)` },
        attempt: attemptPatch,
        event: { type: 'failed', detail: { code, message, deadline: deadline.toISOString() } },
      });
    }
    return this.apply(order, {
      status: code === 'out_of_stock' ? 'awaiting_stock' : 'awaiting_funds',
      next: { step: 'resume_check', at: new Date(now + this.config.AWAIT_RECHECK_INTERVAL_MS) },
      error: { code, message },
      waitDeadline: deadline,
      attempt: attemptPatch,
      event: { type: code === 'out_of_stock' ? 'awaiting_stock' : 'awaiting_funds', detail: { code, message, deadline: deadline.toISOString() } },
    });
  }

  /** Our credentials are refused: open the circuit, fail nothing, try this same step again later. */
  async credentials(order: OrderRow, attempt: AttemptRow, code: string, message: string, step: OrderStep): Promise<StepResult> {
    await this.circuit.open(code, message);
    return this.apply(order, {
      next: { step, at: new Date(Date.now() + this.config.CIRCUIT_RETRY_MS) },
      // Not an unknown outcome: a 401 means the partner did not act on it. Leaving 'sent' keeps it from
      // looking like an interrupted call.
      attempt: { requestId: attempt.requestId, state: attempt.state === 'created' || attempt.state === 'sent' ? 'unknown' : attempt.state, partnerStatus: code, error: { code, message } },
      event: attempt.partnerStatus === code ? undefined : { type: 'credentials_refused', detail: { code, message } },
    });
  }

  /**
   * Invariant 2: an unknown outcome is retried with the SAME request ID (sync: after the first delay, then
   * every interval; async: by polling), until UNKNOWN_OUTCOME_WINDOW_MS, then needs_attention.
   */
  async unknown(order: OrderRow, attempt: AttemptRow, outcome: UnknownOutcome, next: OrderStep, since?: Date): Promise<StepResult> {
    const now = Date.now();
    const windowStart = attempt.unknownSince ?? since ?? new Date(now);
    const error = { code: outcome.reason, message: outcome.message };
    if (windowExpired(this.config, windowStart, now)) return this.needsAttention(order, attempt, error, windowStart);
    const delay =
      next === 'sync_call'
        ? syncRetryDelay(this.config, attempt.unknownSince !== null)
        : this.config.ASYNC_POLL_FIRST_DELAY_MS;
    const base = since && next === 'sync_call' ? since.getTime() : now;
    return this.apply(order, {
      next: { step: next, at: new Date(Math.max(now, base + delay)) },
      attempt: { requestId: attempt.requestId, state: 'unknown', error, unknownSince: since ?? 'start' },
      // One timeline entry when the attempt becomes unknown or the reason changes, not one per retry.
      // (the lease has just marked the attempt 'sent': its error code and window start tell a repeat).
      event:
        attempt.unknownSince !== null && attempt.errorCode === outcome.reason
          ? undefined
          : { type: 'outcome_unknown', detail: { reason: outcome.reason, http_status: outcome.httpStatus ?? null, message: outcome.message } },
    });
  }

  async needsAttention(order: OrderRow, attempt: AttemptRow, error: { code: string; message: string }, since: Date): Promise<StepResult> {
    const message = `No definitive answer for request ID ${attempt.requestId} since ${since.toISOString()} (last: ${error.code}: ${error.message})`;
    this.log.error({ orderId: order.id, requestId: attempt.requestId, reason: error.code }, 'order needs attention: unknown outcome window ran out');
    return this.apply(order, {
      status: 'needs_attention',
      next: null,
      error: { code: 'unknown_outcome', message },
      attempt: { requestId: attempt.requestId, state: 'unknown', error, unknownSince: 'start' },
      event: { type: 'needs_attention', detail: { reason: error.code, message } },
    });
  }

  /** Async status `error`: this request ID failed for good; a new one (committed here first) up to the maximum. */
  async asyncError(order: OrderRow, attempt: AttemptRow): Promise<StepResult> {
    const attemptPatch = {
      requestId: attempt.requestId,
      state: 'failed_definitive' as const,
      partnerStatus: 'error',
      error: { code: 'pull_request_error', message: 'the partner reported status error for this pull request' },
    };
    if (attempt.seq >= this.config.ASYNC_MAX_ATTEMPTS) {
      const message = `The partner's pull failed (status error) for ${attempt.seq} request IDs in a row`;
      return this.apply(order, {
        status: 'failed',
        next: null,
        error: { code: 'pull_request_error', message },
        attempt: attemptPatch,
        event: { type: 'failed', detail: { code: 'pull_request_error', attempts: attempt.seq } },
      });
    }
    const requestId = newRequestId();
    return this.apply(order, {
      next: { step: 'async_create', at: new Date() },
      attempt: attemptPatch,
      newAttempt: { requestId, kind: 'async' },
      event: { type: 'new_attempt', requestId, detail: { previous_request_id: attempt.requestId, reason: 'pull_request_error' } },
    });
  }

  /** Moves the order along (guarded by its step) and says which job comes next. */
  async apply(order: OrderRow, t: Omit<Transition, 'orderId' | 'guard' | 'actor'>): Promise<StepResult> {
    const result = await this.steps.transition({ ...t, orderId: order.id, guard: { stepSeq: order.stepSeq }, actor: this.actor });
    if (!result.applied) return { kind: 'done', reason: 'the order moved on meanwhile' };
    const callbacks = result.callbackEventIds;
    return t.next
      ? { kind: 'next', orderId: order.id, stepSeq: result.stepSeq, step: t.next.step, at: t.next.at, callbacks }
      : { kind: 'done', reason: result.status ?? 'ended', callbacks };
  }
}
