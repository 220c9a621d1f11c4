import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CALL_GATE, isHeldBack, type CallGate, type CallKind, type CallPermit } from '@cardpull/partner-client';
import type { OrderJobData } from '@cardpull/queue';
import { decideResume } from './decision';
import { DecisionApplier, type StepResult } from './decision-applier.service';
import type { AttemptRow, DbClock, StepOrder } from '@cardpull/orders';
import { PartnerConditions } from './partner-conditions';
import { PartnerAsk } from './partner-ask.service';
import { isSendStep, ORDER_STEPS, StepsRepository, type TakenStep } from '@cardpull/orders';
import { LeaseKeeper } from './lease-keeper';

/**
 * How long a step waits in the worker for a permit of the fleet's partner limits before its job is put
 * back in the queue until the wait told (a Retry-After pause, a long queue of creations).
 */
const PERMIT_WAIT_MS = 1_000;
/** A poll of an attempt whose unknown-outcome window is this far gone no longer yields to creations. */
const URGENT_SHARE_OF_WINDOW = 0.75;
/** A step whose lease another run holds looks again this long after the lease's end (and never sooner). */
const LEASE_RECHECK_MIN_MS = 50;

/**
 * Runs one step of an order: the sync pull, the async creation, a poll, or the check of an order waiting
 * for funds or stock. The job only says "look at order N" (its name is for people reading the dashboard):
 * which step runs, and with which request ID, is read from the order's row in Postgres (STYLE habit 1), so
 * a wrong or edited job can never send an async order's request ID to POST /cards. Any step may run twice
 * or concurrently (invariant 5): the lease keeps two workers from sending one request ID at once, and every
 * write is guarded by the order's step. Asking the partner, deciding and applying is PartnerAsk's.
 */
@Injectable()
export class StepRunner {
  constructor(
    private readonly steps: StepsRepository,
    private readonly applier: DecisionApplier,
    private readonly asker: PartnerAsk,
    private readonly conditions: PartnerConditions,
    @Inject(CALL_GATE) private readonly gate: CallGate,
    private readonly leases: LeaseKeeper,
  ) {}

  private get config() {
    return this.applier.config;
  }

  /**
   * `name`: the job's name, which says only which partner limits a creation's permit is charged to;
   * `priority`: the job's queue priority, its rank among this process's calls held back by the limits.
   */
  async run(job: OrderJobData, name?: string, priority?: number): Promise<StepResult> {
    // One lease owner per run, not per process: a second copy of this job in the same process (a Redis
    // flush, a stalled-job retry) must wait for the first one's call instead of taking it over.
    const owner = `${this.applier.actor}/${randomUUID().slice(0, 8)}`;
    // A pull call's permit is taken before the order is leased (which records the call as sent): a call
    // the fleet's limits hold back is never sent, so it never counts as an unknown outcome. Which limits
    // it is charged to follows the job's name; what is sent still follows the order's row.
    const permit = isSendStep(name) ? await this.gate.acquire(ORDER_STEPS[name].call, { maxWaitMs: PERMIT_WAIT_MS, ...(priority ? { rank: priority } : {}) }) : undefined;
    if (permit && isHeldBack(permit)) return { kind: 'delay', delayMs: permit.waitMs, reason: `held back by the partner limits (${permit.reason})` };
    // The wait for a database connection comes between the permit and the lease: a pause the partner asked
    // for meanwhile (another worker's 429) still holds this call back.
    let pausedFor = 0;
    const ready = permit
      ? () => {
          // Answered at once when nothing needs asking: no await between the connection and the statement.
          const paused = permit.recheck();
          return typeof paused === 'number' ? (pausedFor = paused) === 0 : paused.then((p) => (pausedFor = p) === 0);
        }
      : undefined;
    const taken = await this.steps.take(job.orderId, job.stepSeq, owner, this.leases.leaseMs, ready).catch((error: unknown) => {
      permit?.done({ sent: false });
      throw error;
    });
    if (taken === 'held' || !taken?.leased) permit?.done({ sent: false });
    if (taken === 'held') return { kind: 'delay', delayMs: pausedFor, reason: 'held back by a partner pause' };
    if (!taken) return { kind: 'done', reason: 'no such order' };
    const { order, clock } = taken;
    if (order.stepSeq !== job.stepSeq || !order.nextStep) return { kind: 'done', reason: 'stale step' };
    if (taken.leased) return this.call(taken, owner, permit);
    if (order.nextStepAt && clock.until(order.nextStepAt) > 1_000) {
      return { kind: 'delay', delayMs: clock.until(order.nextStepAt), reason: 'not due yet' };
    }
    switch (order.nextStep) {
      case 'async_poll':
        return this.poll(order, taken.attempt, clock);
      case 'resume_check':
        return this.resume(taken);
      default:
        // A partner call whose lease another run holds: after it, whatever it decided; or, its holder dead,
        // right when the lease runs out (a live holder's renewed lease sends this job back again then).
        return { kind: 'delay', delayMs: Math.max(LEASE_RECHECK_MIN_MS, (order.leaseExpiresAt ? clock.until(order.leaseExpiresAt) : 0) + LEASE_RECHECK_MIN_MS), reason: `leased by ${order.leaseOwner}` };
    }
  }

  /**
   * POST /cards or POST /pull_requests with the attempt's request ID (committed before: invariant 1), under
   * the lease `owner` took (renewed by the LeaseKeeper while the call is in flight, stopped if it cannot be).
   */
  private async call(taken: TakenStep, owner: string, given?: CallPermit): Promise<StepResult> {
    const { order, attempt, previousState, clock } = taken;
    const sent = order.nextStep;
    if (!isSendStep(sent)) throw new Error(`order ${order.id}: leased at step ${sent}, which sends nothing`);
    if ((sent === 'sync_call') !== (order.mode === 'sync') || attempt.kind !== order.mode) {
      throw new Error(`order ${order.id}: step ${sent} does not fit a ${order.mode} order with a ${attempt.kind} attempt`);
    }
    const before = { ...attempt, state: previousState };
    // Leased from a job of another name (only a hand-made job): take the permit now, before any call.
    const permit = given ?? (await this.permitNow('create'));
    if (previousState === 'sent') {
      permit.done({ sent: false });
      // The call was made by a worker that stopped before recording its answer: an unknown outcome.
      const { result } = await this.asker.settle(order, before, sent, { kind: 'interrupted', sentAt: attempt.lastSentAt ?? new Date(clock.now()), by: taken.previousOwner }, clock.now());
      return sent === 'async_create' ? this.pollInterruptedCreation(order.id, result) : result;
    }
    const lease = this.leases.hold(order.id, owner, taken.sentAt);
    try {
      if (!lease.holds()) {
        // The lease ran out before the call could go (this process stood still): never sent. Recorded as a
        // call that did not reach the partner, so the same ID is sent again soon, under a lease of its own.
        permit.done({ sent: false });
        const notSent = { kind: 'unknown' as const, reason: 'not_connected' as const, message: 'not sent: the order\'s lease ran out before the call could go' };
        return (await this.asker.settle(order, before, sent, notSent, clock.now())).result;
      }
      return (await this.asker.ask(order, before, sent, clock, permit, { stop: lease.signal })).result;
    } finally {
      lease.release();
    }
  }

  /** A permit without waiting on creations' queue (the lease is already taken: the call must go now). */
  private async permitNow(kind: CallKind): Promise<CallPermit> {
    const got = await this.gate.acquire(kind, { maxWaitMs: 0, urgent: true });
    return isHeldBack(got) ? { kind, done: () => undefined, recheck: () => 0 } : got;
  }

  /** GET /pull_requests/:request_id. A poll that learns nothing writes nothing but notes: the job re-delays itself. */
  private async poll(order: StepOrder, attempt: AttemptRow, clock: DbClock): Promise<StepResult> {
    // The poll is judged as of when it was sent: a run of 404s counts only the time the partner itself saw
    // go by (from the first 404, recorded after it came, to this GET's sending), however slowly this
    // answer was processed (PULL_REQUEST_SETTLE_MS is then never shortened by our own latency).
    // Polls yield to creations (they wait on the shared limits first), unless the attempt's unknown-outcome
    // window is nearly gone, or this poll has waited PARTNER_POLL_MAX_YIELD_MS past its time already.
    const window = this.config.UNKNOWN_OUTCOME_WINDOW_MS;
    const urgent = attempt.unknownSince != null && clock.now() - attempt.unknownSince.getTime() > window * URGENT_SHARE_OF_WINDOW;
    const permit = await this.gate.acquire('poll', { maxWaitMs: PERMIT_WAIT_MS, urgent, ...(order.nextStepAt ? { heldSince: order.nextStepAt.getTime() } : {}) });
    if (isHeldBack(permit)) return { kind: 'delay', delayMs: permit.waitMs, reason: `poll held back by the partner limits (${permit.reason})` };
    return (await this.asker.ask(order, attempt, 'async_poll', clock, permit)).result;
  }

  /**
   * An interrupted creation was sent at least a whole lease ago (ORDER_LEASE_MS, 3 s by default), so its
   * first poll (ASYNC_POLL_FIRST_DELAY_MS after the creation, 2 s) is due: poll now, in this job, instead of
   * one more delay after the takeover. A poll needs no lease (a GET changes nothing at the partner); its own
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
