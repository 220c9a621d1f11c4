import { Injectable } from '@nestjs/common';
import { PartnerClient, type CallPermit } from '@cardpull/partner-client';
import type { AttemptRow, DbClock, OrderRow } from '@cardpull/orders';
import { decide, type Answer, type Decision, type Sent } from './decision';
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
  constructor(
    private readonly partner: PartnerClient,
    private readonly applier: DecisionApplier,
  ) {}

  /**
   * Sends the attempt's request ID (POST /cards, POST /pull_requests: committed before, invariant 1) or reads
   * its pull request, then settles the answer. A poll is judged as of when it was sent (the settle window
   * counts only time the partner itself saw go by); a send as of its answer.
   */
  async ask(order: OrderRow, attempt: AttemptRow, sent: Sent, clock: DbClock, permit?: CallPermit, opts: { reconciling?: boolean; actor?: string } = {}): Promise<Asked> {
    const sentAt = clock.now();
    const answer = await this.call(order, attempt, sent, permit);
    return this.settle(order, attempt, sent, answer, sent === 'async_poll' ? sentAt : clock.now(), opts);
  }

  /** What `answer` means for the attempt as it was before the call (decide), applied (DecisionApplier). */
  async settle(order: OrderRow, attempt: AttemptRow, sent: Sent, answer: Answer, now: number, opts: { reconciling?: boolean; actor?: string } = {}): Promise<Asked> {
    const decision = decide({ order, attempt, sent, answer, now, timings: this.applier.config, ...(opts.reconciling ? { reconciling: true } : {}) });
    const result = await this.applier.apply(order, attempt, decision, opts.actor);
    return { result, decision };
  }

  private call(order: OrderRow, attempt: AttemptRow, sent: Sent, permit?: CallPermit): Promise<Answer> {
    switch (sent) {
      case 'sync_call':
        return this.partner.createCard(attempt.requestId, order.giftCardCode, order.amount, permit);
      case 'async_create':
        return this.partner.createPullRequest(attempt.requestId, order.giftCardCode, order.amount, permit);
      case 'async_poll':
        return this.partner.getPullRequest(attempt.requestId, permit);
    }
  }
}
