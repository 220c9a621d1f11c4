import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { OrderStep } from '@cardpull/db';
import { PartnerClient, type PartnerOutcome, type PullRequest } from '@cardpull/partner-client';
import type { OrderJobData } from '@cardpull/queue';
import { newRequestId } from './ids';
import { PartnerSnapshots } from './partner-watch';
import type { AttemptRow, OrderRow } from './order.types';
import { StepOutcomes, isAcknowledged, type StepResult, type UnknownOutcome } from './step-outcomes.service';
import { StepsRepository, type LeaseResult } from './steps.repository';
import { leaseMs, pollDelay, windowExpired } from './timings';

/**
 * Runs one step of an order: the sync pull, the async creation, a poll, or the check of an order waiting
 * for funds or stock. The job carries only the order id and step; everything is decided from Postgres
 * (STYLE habit 1). Any step may run twice or concurrently (invariant 5): the lease keeps two workers from
 * sending one request ID at once, and every write is guarded by the order's step.
 */
@Injectable()
export class OrderSteps {
  constructor(
    private readonly steps: StepsRepository,
    private readonly outcomes: StepOutcomes,
    private readonly partner: PartnerClient,
    private readonly snapshots: PartnerSnapshots,
  ) {}

  private get config() {
    return this.outcomes.config;
  }

  async run(job: OrderJobData & { step: string }): Promise<StepResult> {
    // One lease owner per run, not per process: a second copy of this job in the same process (a Redis
    // flush, a stalled-job retry) must wait for the first one's call instead of taking it over.
    const owner = `${this.outcomes.actor}/${randomUUID().slice(0, 8)}`;
    if (job.step === 'sync_call' || job.step === 'async_create') {
      // Hot path: lease first (one round trip); only look closer when the lease is refused.
      const leased = await this.steps.lease(job.orderId, job.stepSeq, owner, leaseMs(this.config));
      if (leased) return job.step === 'sync_call' ? this.syncCall(leased) : this.asyncCreate(leased);
    }
    const current = await this.steps.current(job.orderId);
    if (!current) return { kind: 'done', reason: 'no such order' };
    const { order, attempt } = current;
    if (order.stepSeq !== job.stepSeq || !order.nextStep) return { kind: 'done', reason: 'stale step' };
    if (order.nextStepAt && order.nextStepAt.getTime() > Date.now() + 1_000) {
      return { kind: 'delay', until: order.nextStepAt, reason: 'not due yet' };
    }
    if (order.leaseExpiresAt && order.leaseExpiresAt.getTime() > Date.now()) {
      return { kind: 'delay', until: order.leaseExpiresAt, reason: `leased by ${order.leaseOwner}` };
    }
    switch (order.nextStep) {
      case 'async_poll':
        return this.asyncPoll(order, attempt);
      case 'resume_check':
        return this.resumeCheck(order, attempt);
      default: {
        // A sync_call / async_create job whose name did not say so (older job), or a lease race: lease now.
        const leased = await this.steps.lease(order.id, order.stepSeq, owner, leaseMs(this.config));
        if (!leased) return { kind: 'delay', until: new Date(Date.now() + 1_000), reason: 'lease not obtained' };
        return order.nextStep === 'sync_call' ? this.syncCall(leased) : this.asyncCreate(leased);
      }
    }
  }

  /** POST /cards with the attempt's request ID (committed at intake or with the new attempt: invariant 1). */
  private async syncCall({ order, attempt, previousState }: LeaseResult): Promise<StepResult> {
    if (previousState === 'sent') return this.interrupted(order, attempt, 'sync_call');
    const out = await this.partner.createCard(attempt.requestId, order.giftCardCode, order.amount);
    switch (out.kind) {
      case 'success':
        return this.outcomes.card(order, attempt, out.value, 'issued');
      case 'definitive':
        return this.outcomes.definitive(order, attempt, out.code, out.message);
      case 'credentials':
        return this.outcomes.credentials(order, attempt, out.code, out.message, 'sync_call');
      default:
        return this.outcomes.unknown(order, attempt, asUnknown(out), 'sync_call');
    }
  }

  /** POST /pull_requests; whatever happens next is learned by polling the same request ID. */
  private async asyncCreate({ order, attempt, previousState }: LeaseResult): Promise<StepResult> {
    if (previousState === 'sent') return this.interrupted(order, attempt, 'async_poll');
    const out = await this.partner.createPullRequest(attempt.requestId, order.giftCardCode, order.amount);
    switch (out.kind) {
      case 'success':
        return this.pullRequestSeen(order, attempt, out.value, 'pull_request_created');
      case 'request_id_used':
        // Our earlier create reached the partner: poll that request ID (ARCHITECTURE.md, 422 row).
        return this.outcomes.apply(order, {
          next: { step: 'async_poll', at: new Date() },
          attempt: { requestId: attempt.requestId, partnerStatus: 'exists', error: null },
          event: { type: 'pull_request_exists', detail: { message: out.message } },
        });
      case 'definitive':
        return this.outcomes.definitive(order, attempt, out.code, out.message);
      case 'credentials':
        return this.outcomes.credentials(order, attempt, out.code, out.message, 'async_create');
      default:
        // Created or not? Polling tells: a 404 on an unacknowledged ID means "create again, same ID".
        return this.outcomes.unknown(order, attempt, asUnknown(out), 'async_poll');
    }
  }

  /** GET /pull_requests/:request_id. A poll that learns nothing writes nothing: it re-delays its own job. */
  private async asyncPoll(order: OrderRow, attempt: AttemptRow): Promise<StepResult> {
    const out = await this.partner.getPullRequest(attempt.requestId);
    const now = Date.now();
    const nextPoll = new Date(now + pollDelay(this.config));
    switch (out.kind) {
      case 'success':
        return this.pullRequestSeen(order, attempt, out.value, 'pull_request_status');
      case 'not_found':
        if (!isAcknowledged(attempt)) {
          // The create never reached the partner: create again with the same request ID (ARCHITECTURE.md, 404 row).
          return this.outcomes.apply(order, {
            next: { step: 'async_create', at: new Date() },
            attempt: { requestId: attempt.requestId, error: { code: out.code, message: out.message } },
            event: { type: 'create_again', detail: { code: out.code } },
          });
        }
        return this.pollUnknown(order, attempt, { reason: 'unexpected', message: `${out.code} for an acknowledged pull request`, httpStatus: out.httpStatus }, nextPoll);
      case 'credentials':
        return this.outcomes.credentials(order, attempt, out.code, out.message, 'async_poll');
      default:
        return this.pollUnknown(order, attempt, asUnknown(out), nextPoll);
    }
  }

  private async pullRequestSeen(order: OrderRow, attempt: AttemptRow, pr: PullRequest, eventType: string): Promise<StepResult> {
    if (pr.status === 'success' && pr.card) return this.outcomes.card(order, attempt, pr.card, 'success');
    if (pr.status === 'error') return this.outcomes.asyncError(order, attempt);
    const now = Date.now();
    // A pull request may stay pending for UNKNOWN_OUTCOME_WINDOW_MS, counted from its creation or from the
    // last re-drive (which restarts the window), whichever is later.
    const started = attempt.unknownSince ?? attempt.firstSentAt ?? attempt.createdAt;
    if (windowExpired(this.config, started, now)) {
      return this.outcomes.needsAttention(order, attempt, { code: 'still_pending', message: `pull request still ${pr.status}` }, started);
    }
    if (order.nextStep === 'async_create') {
      return this.outcomes.apply(order, {
        next: { step: 'async_poll', at: new Date(now + this.config.ASYNC_POLL_FIRST_DELAY_MS) },
        attempt: { requestId: attempt.requestId, partnerStatus: pr.status, error: null },
        event: { type: eventType, detail: { status: pr.status } },
      });
    }
    if (pr.status !== attempt.partnerStatus) await this.steps.notePartnerStatus(attempt.requestId, pr.status);
    return { kind: 'delay', until: new Date(now + pollDelay(this.config)), reason: `still ${pr.status}` };
  }

  private async pollUnknown(order: OrderRow, attempt: AttemptRow, out: UnknownOutcome, nextPoll: Date): Promise<StepResult> {
    const since = attempt.unknownSince ?? new Date();
    if (windowExpired(this.config, since, Date.now())) return this.outcomes.needsAttention(order, attempt, { code: out.reason, message: out.message }, since);
    if (!attempt.unknownSince) await this.steps.notePartnerStatus(attempt.requestId, attempt.partnerStatus ?? 'unknown', true);
    return { kind: 'delay', until: nextPoll, reason: `poll: ${out.reason}` };
  }

  /**
   * The attempt was sent by a worker that died (or lost its lease) before recording the answer: an
   * unknown outcome, counted from that call (invariant 2: same ID; sync waits the first-retry delay).
   */
  private async interrupted(order: OrderRow, attempt: AttemptRow, next: OrderStep): Promise<StepResult> {
    const error = { reason: 'interrupted', message: 'the worker that made the call stopped before recording its answer' };
    const since = attempt.lastSentAt ?? new Date();
    const recorded = await this.outcomes.unknown(order, attempt, error, next, since);
    if (next !== 'async_poll' || recorded.kind !== 'next') return recorded;
    // An interrupted creation was sent a whole lease ago (PARTNER_TIMEOUT_MS and more), so its first poll
    // (ASYNC_POLL_FIRST_DELAY_MS after the creation) is overdue: poll now, in this job, instead of one more
    // delay after the takeover. A poll needs no lease (a GET changes nothing at the partner). The rows are
    // as the transition just wrote them; should the order move on meanwhile, the poll's own transition is
    // refused by its step guard.
    const polled = await this.asyncPoll(
      { ...order, stepSeq: recorded.stepSeq, nextStep: 'async_poll', nextStepAt: recorded.at, leaseOwner: null, leaseExpiresAt: null },
      { ...attempt, state: 'unknown', errorCode: error.reason, errorMessage: error.message, unknownSince: attempt.unknownSince ?? since },
    );
    // Still pending: this job was the creation's; the poll step's own job comes at the next poll time.
    return polled.kind === 'delay' ? { ...recorded, at: polled.until } : polled;
  }

  /** awaiting_funds / awaiting_stock: resume with a new request ID when the partner can serve the order. */
  private async resumeCheck(order: OrderRow, attempt: AttemptRow): Promise<StepResult> {
    const now = Date.now();
    if (order.waitDeadline && order.waitDeadline.getTime() <= now) {
      const code = order.errorCode ?? (order.status === 'awaiting_funds' ? 'not_enough_funds' : 'out_of_stock');
      return this.outcomes.apply(order, {
        status: 'failed',
        next: null,
        error: { code, message: `${order.errorMessage ?? code} (still so at the waiting deadline ${order.waitDeadline.toISOString()})` },
        event: { type: 'failed', detail: { code, reason: 'wait_deadline' } },
      });
    }
    const available = order.status === 'awaiting_funds' ? await this.fundsAvailable(order) : await this.stockAvailable(order);
    if (!available) return { kind: 'delay', until: new Date(now + this.config.AWAIT_RECHECK_INTERVAL_MS), reason: 'still waiting' };
    const requestId = newRequestId();
    return this.outcomes.apply(order, {
      status: 'in_progress',
      next: { step: order.mode === 'sync' ? 'sync_call' : 'async_create', at: new Date() },
      error: null,
      newAttempt: { requestId, kind: order.mode },
      event: { type: 'resumed', requestId, detail: { previous_request_id: attempt.requestId, was: order.status } },
    });
  }

  /**
   * The waiting checks read the partner through PartnerSnapshots, with an age of at most half the
   * re-check interval (2 s at most): every order waiting at once shares one GET /balance or one inventory
   * read (in flight in this process, in Postgres across processes) instead of one call per order. A copy
   * that could not be refreshed (stale) is not trusted: the order waits one more interval.
   */
  private get waitCheckMaxAgeMs(): number {
    return Math.min(2_000, Math.floor(this.config.AWAIT_RECHECK_INTERVAL_MS / 2));
  }

  private async fundsAvailable(order: OrderRow): Promise<boolean> {
    const balance = await this.snapshots.balance(this.waitCheckMaxAgeMs);
    // Balance is in currency units, amounts in minor units (see the simulator's README for this reading).
    return !!balance && !balance.stale && balance.data.balance.amount * 100 >= order.amount;
  }

  private async stockAvailable(order: OrderRow): Promise<boolean> {
    const inventory = await this.snapshots.inventory(order.giftCardCode, this.waitCheckMaxAgeMs);
    if (!inventory || inventory.stale) return false;
    const inv = inventory.data.inventories;
    if (inv.end_to_end_api?.available_amount === 'unlimited') return true;
    const stock = inv.stocks.find((s) => s.facial_value === order.amount);
    if (stock) return stock.owned_quantity + (stock.shared_quantity ?? 0) > 0;
    // A free-amount card has no per-value stock: trust an available amount large enough.
    const available = Number(inv.end_to_end_api?.available_amount);
    return Number.isFinite(available) && available >= order.amount;
  }
}

function asUnknown(out: PartnerOutcome<unknown>): UnknownOutcome {
  if (out.kind === 'unknown') return out;
  return { reason: 'unexpected', message: `unexpected ${out.kind} answer`, httpStatus: 'httpStatus' in out ? out.httpStatus : undefined };
}
