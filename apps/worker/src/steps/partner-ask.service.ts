import { Injectable, Logger } from '@nestjs/common';
import { isLogged } from '@cardpull/logger';
import { PartnerClient, type CallPermit } from '@cardpull/partner-client';
import type { AttemptRow, DbClock, StepOrder } from '@cardpull/orders';
import { decide, interruptedMessage, type Answer, type Decision, type Sent } from './decision';
import { DecisionApplier, type StepResult } from './decision-applier.service';

export interface Asked {
  result: StepResult;
  decision: Decision;
}

/**
 * Ask the partner about one request ID, decide what the answer means, apply it: the one sequence behind
 * every question about an ID, whoever asks (the step runner for the order's own steps, the reconciler for
 * the IDs no step asks any more). The caller brings the permit of the fleet's limits and, for a send, holds
 * the order's lease (one sender per ID).
 */
@Injectable()
export class PartnerAsk {
  private readonly log = new Logger(PartnerAsk.name);

  constructor(
    private readonly partner: PartnerClient,
    private readonly applier: DecisionApplier,
  ) {}

  /**
   * Sends the attempt's request ID (POST /cards, POST /pull_requests: committed before, invariant 1) or reads
   * its pull request, then settles the answer. A poll is judged as of when it was sent (the settle window
   * counts only time the partner itself saw go by); a send as of its answer. `stop`: the send's lease
   * could not be renewed (LeaseKeeper): the call stops before it runs out.
   */
  async ask(order: StepOrder, attempt: AttemptRow, sent: Sent, clock: DbClock, permit?: CallPermit, opts: { reconciling?: boolean; actor?: string; stop?: AbortSignal } = {}): Promise<Asked> {
    const sentAt = clock.now();
    const answer = await this.call(order, attempt, sent, permit, opts.stop);
    return this.settle(order, attempt, sent, answer, sent === 'async_poll' ? sentAt : clock.now(), opts);
  }

  /** What `answer` means for the attempt as it was before the call (decide), applied (DecisionApplier). */
  async settle(order: StepOrder, attempt: AttemptRow, sent: Sent, answer: Answer, now: number, opts: { reconciling?: boolean; actor?: string } = {}): Promise<Asked> {
    const decision = decide({ order, attempt, sent, answer, now, timings: this.applier.config, ...(opts.reconciling ? { reconciling: true } : {}) });
    const result = await this.applier.apply(order, attempt, decision, opts.actor);
    this.logAnswer(order, attempt, sent, answer, decision, result, opts.reconciling === true);
    return { result, decision };
  }

  /**
   * One line per partner answer about a request ID, with what it meant and when the ID is asked next: an
   * expected answer (a timeout, a 5xx, a reset, a 429, "come back later", an unreadable body) is part of the
   * partner's life, never a stack. Our own failures are thrown and logged, with their stack, by the processor.
   */
  private logAnswer(order: StepOrder, attempt: AttemptRow, sent: Sent, answer: Answer, decision: Decision, result: StepResult, reconciling: boolean): void {
    const loudness = answer.kind === 'success' && decision.kind !== 'store_card' ? 'pending' : answer.kind === 'unknown' && answer.reason === 'in_progress' ? 'in_progress' : answer.kind;
    // One line per answer, so it is not even built when its level is off (LOG_LEVEL).
    if (!isLogged(LEVEL[loudness])) return;
    const facts = answerFacts(answer, decision);
    // An ID the reconciler asks and leaves as it was is asked again at its next pass, not by a step.
    const byReconciler = reconciling && result.kind === 'delay';
    const next = byReconciler ? null : result.kind === 'next' ? result.step : result.kind === 'delay' ? sent : null;
    const nextAskInMs = byReconciler || result.kind === 'done' ? null : Math.round(result.delayMs);
    const line = {
      partnerAnswer: {
        orderId: order.id,
        requestId: attempt.requestId,
        step: sent,
        ...facts,
        rule: decision.rule,
        nextStep: next,
        nextAskInMs,
        ...(result.kind === 'done' ? { outcome: result.reason } : {}),
        ...(reconciling ? { reconciling: true } : {}),
      },
    };
    const said = `${facts.classification}${facts.httpStatus !== undefined ? ` (HTTP ${facts.httpStatus})` : ''}`;
    const then = byReconciler ? 'the reconciler’s next pass' : nextAskInMs === null ? (result.kind === 'done' ? result.reason : 'done') : `${next} in ${(nextAskInMs / 1000).toFixed(1)} s`;
    const message = `partner answer to ${sent} of request ID ${attempt.requestId}: ${said} -> ${decision.rule}; next: ${then}`;
    this.log[LEVEL[loudness]](line, message);
  }

  private call(order: StepOrder, attempt: AttemptRow, sent: Sent, permit?: CallPermit, stop?: AbortSignal): Promise<Answer> {
    switch (sent) {
      case 'sync_call':
        return this.partner.createCard(attempt.requestId, order.giftCardCode, order.amount, permit, stop);
      case 'async_create':
        return this.partner.createPullRequest(attempt.requestId, order.giftCardCode, order.amount, permit, stop);
      case 'async_poll':
        return this.partner.getPullRequest(attempt.requestId, permit);
    }
  }
}

/**
 * How loud each answer is: a card, "come back later", a business answer or a 404 are the partner's normal
 * word (info); a pending pull request is routine polling (debug); a timeout, 5xx, reset, 429 or an answer we
 * cannot read, and refused credentials, say something is off at the partner (warn). Never error: that is
 * for our own failures (and the alerts: needs attention, surplus or mismatched cards).
 */
const LEVEL = {
  success: 'log',
  pending: 'debug',
  in_progress: 'log',
  definitive: 'log',
  request_id_used: 'log',
  not_found: 'log',
  credentials: 'warn',
  unknown: 'warn',
  interrupted: 'warn',
} as const satisfies Record<Answer['kind'] | 'pending' | 'in_progress', 'debug' | 'log' | 'warn'>;

/** What the partner said, as the log line names it: never a card's code or PIN, never a body. */
function answerFacts(answer: Answer, decision: Decision): { answer: Answer['kind']; classification: string; httpStatus?: number; code?: string; retryAfterMs?: number; message?: string } {
  switch (answer.kind) {
    case 'interrupted':
      return { answer: 'interrupted', classification: 'interrupted', message: interruptedMessage(answer) };
    case 'success': {
      const value = answer.value as { status?: unknown };
      const classification = decision.kind === 'store_card' ? 'card' : typeof value.status === 'string' ? `pull request ${value.status}` : 'success';
      return { answer: 'success', classification, httpStatus: answer.httpStatus };
    }
    case 'unknown':
      return {
        answer: 'unknown',
        classification: answer.reason,
        ...(answer.httpStatus !== undefined ? { httpStatus: answer.httpStatus } : {}),
        ...(answer.code !== undefined ? { code: answer.code } : {}),
        ...(answer.retryAfterMs !== undefined ? { retryAfterMs: answer.retryAfterMs } : {}),
        message: answer.message,
      };
    case 'request_id_used':
      return { answer: answer.kind, classification: 'request_id_used', httpStatus: answer.httpStatus, message: answer.message };
    default:
      return { answer: answer.kind, classification: answer.code, httpStatus: answer.httpStatus, code: answer.code, message: answer.message };
  }
}
