import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PartnerClient } from '@cardpull/partner-client';
import type { OrderJobData } from '@cardpull/queue';
import { conditionToCheck, decide, decideResume, type Answer, type DecisionInput, type Sent } from './decision';
import { DecisionApplier, type StepResult } from './decision-applier.service';
import type { AttemptRow, DbClock, OrderRow } from '@cardpull/orders';
import { PartnerConditions } from './partner-conditions';
import { leaseMs, StepsRepository, type TakenStep } from '@cardpull/orders';

/**
 * Runs one step of an order: the sync pull, the async creation, a poll, or the check of an order waiting
 * for funds or stock. The job only says "look at order N" (its name is for people reading the dashboard):
 * which step runs, and with which request ID, is read from the order's row in Postgres (STYLE habit 1), so
 * a wrong or edited job can never send an async order's request ID to POST /cards. Any step may run twice
 * or concurrently (invariant 5): the lease keeps two workers from sending one request ID at once, and every
 * write is guarded by the order's step. What a partner answer means is decided by `decide` alone.
 */
@Injectable()
export class StepRunner {
  constructor(
    private readonly steps: StepsRepository,
    private readonly applier: DecisionApplier,
    private readonly partner: PartnerClient,
    private readonly conditions: PartnerConditions,
  ) {}

  private get config() {
    return this.applier.config;
  }

  async run(job: OrderJobData): Promise<StepResult> {
    // One lease owner per run, not per process: a second copy of this job in the same process (a Redis
    // flush, a stalled-job retry) must wait for the first one's call instead of taking it over.
    const owner = `${this.applier.actor}/${randomUUID().slice(0, 8)}`;
    const taken = await this.steps.take(job.orderId, job.stepSeq, owner, leaseMs(this.config));
    if (!taken) return { kind: 'done', reason: 'no such order' };
    const { order, clock } = taken;
    if (order.stepSeq !== job.stepSeq || !order.nextStep) return { kind: 'done', reason: 'stale step' };
    if (taken.leased) return this.call(taken);
    if (order.nextStepAt && clock.until(order.nextStepAt) > 1_000) {
      return { kind: 'delay', delayMs: clock.until(order.nextStepAt), reason: 'not due yet' };
    }
    switch (order.nextStep) {
      case 'async_poll':
        return this.poll(order, taken.attempt, clock);
      case 'resume_check':
        return this.resume(taken);
      default:
        // A partner call whose lease another run holds: after it, whatever it decided.
        return { kind: 'delay', delayMs: Math.max(1_000, order.leaseExpiresAt ? clock.until(order.leaseExpiresAt) : 0), reason: `leased by ${order.leaseOwner}` };
    }
  }

  /** POST /cards or POST /pull_requests with the attempt's request ID (committed before: invariant 1). */
  private async call(taken: TakenStep): Promise<StepResult> {
    const { order, attempt, previousState, clock } = taken;
    const sent = order.nextStep as 'sync_call' | 'async_create';
    if ((sent === 'sync_call') !== (order.mode === 'sync') || attempt.kind !== order.mode) {
      throw new Error(`order ${order.id}: step ${sent} does not fit a ${order.mode} order with a ${attempt.kind} attempt`);
    }
    const before = { ...attempt, state: previousState };
    if (previousState === 'sent') {
      // The call was made by a worker that stopped before recording its answer: an unknown outcome.
      const recorded = await this.decideAndApply(order, before, sent, { kind: 'interrupted', sentAt: attempt.lastSentAt ?? new Date(clock.now()) }, clock);
      return sent === 'async_create' ? this.pollInterruptedCreation(order.id, recorded) : recorded;
    }
    const answer =
      sent === 'sync_call'
        ? await this.partner.createCard(attempt.requestId, order.giftCardCode, order.amount)
        : await this.partner.createPullRequest(attempt.requestId, order.giftCardCode, order.amount);
    return this.decideAndApply(order, before, sent, answer, clock);
  }

  /** GET /pull_requests/:request_id. A poll that learns nothing writes nothing but notes: the job re-delays itself. */
  private async poll(order: OrderRow, attempt: AttemptRow, clock: DbClock): Promise<StepResult> {
    // The poll is judged as of when it was sent: a run of 404s counts only the time the partner itself saw
    // go by (from the first 404, recorded after it came, to this GET's sending), however slowly this
    // answer was processed (PULL_REQUEST_SETTLE_MS is then never shortened by our own latency).
    const sentAt = clock.now();
    const answer = await this.partner.getPullRequest(attempt.requestId);
    return this.decideAndApply(order, attempt, 'async_poll', answer, clock, sentAt);
  }

  private async decideAndApply(order: OrderRow, attempt: AttemptRow, sent: Sent, answer: Answer, clock: DbClock, sentAt?: number): Promise<StepResult> {
    const input: DecisionInput = { order, attempt, sent, answer, now: sentAt ?? clock.now(), timings: this.config };
    const check = conditionToCheck(input);
    // The same business error twice on a live sync ID: the partner's own read, taken after that answer, decides.
    if (check) input.conditionCleared = (await this.conditions.check(check, order, 0)) === 'cleared';
    return this.applier.apply(order, attempt, decide({ ...input, now: sentAt ?? clock.now() }));
  }

  /**
   * An interrupted creation was sent a whole lease ago (PARTNER_TIMEOUT_MS and more), so its first poll
   * (ASYNC_POLL_FIRST_DELAY_MS after the creation) is overdue: poll now, in this job, instead of one more
   * delay after the takeover. A poll needs no lease (a GET changes nothing at the partner); its own
   * transition is guarded by the step just written.
   */
  private async pollInterruptedCreation(orderId: string, recorded: StepResult): Promise<StepResult> {
    if (recorded.kind !== 'next' || recorded.step !== 'async_poll') return recorded;
    const now = await this.steps.current(orderId);
    if (!now || now.order.stepSeq !== recorded.stepSeq) return recorded;
    const polled = await this.poll(now.order, now.attempt, now.clock);
    // Still pending: the poll step's own job comes at the next poll time.
    return polled.kind === 'delay' ? { ...recorded, delayMs: polled.delayMs } : { ...polled, callbacks: [...(recorded.callbacks ?? []), ...(polled.callbacks ?? [])] };
  }

  /** awaiting_funds / awaiting_stock: go on when the partner's balance or inventory allows (see decideResume). */
  private async resume({ order, attempt, clock }: TakenStep): Promise<StepResult> {
    const condition = await this.conditions.check(order.status === 'awaiting_funds' ? 'funds' : 'stock', order);
    return this.applier.apply(order, attempt, decideResume({ order, attempt, now: clock.now(), timings: this.config, condition }));
  }
}
