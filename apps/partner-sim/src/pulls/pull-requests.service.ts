import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import type { PullRequest } from '@cardpull/partner-client';
import { ok } from '../common/answer';
import { PartnerError } from '../common/partner-error';
import { isoWithOffset } from '../common/time';
import { FaultRegistry, type FaultContext } from '../faults/fault-registry';
import { answersBeforeAnything, brokenAnswer, latencyOf, ResponderService } from '../faults/responder.service';
import { SchedulerService } from '../state/scheduler.service';
import { SimStateService } from '../state/sim-state.service';
import type { PullRequestRecord, SimWorld } from '../state/world';
import { checkPull, isBrokenBrand, publicBase, unwrapBody, type PullOrder } from './pull-engine';
import { lagging, shownInstead } from './pull-request-readings';

/** The creation answer carries amount_cents; the show answer does not (as in the spec's sample). */
const creationView = (pr: PullRequestRecord): PullRequest => ({
  id: pr.id,
  status: pr.status,
  request_id: pr.request_id,
  amount_cents: pr.amount_cents,
  created_at: pr.created_at,
  updated_at: pr.updated_at,
  card: pr.card,
});

const showView = (pr: PullRequestRecord): PullRequest => {
  const { amount_cents: _omitted, ...view } = creationView(pr);
  return view;
};

/**
 * POST /pull_requests and GET /pull_requests/:request_id, the asynchronous pull. Stock and balance are
 * reserved at creation; in the background the pull request is `waiting` for the first half of
 * SIM_ASYNC_DELAY_MS, then `processing` (the spec does not show when that happens; our choice), then
 * `success` with a card issued at that moment, or `error` with the reservation released.
 */
@Injectable()
export class PullRequestsService {
  constructor(
    @Inject(SIM_CONFIG) private readonly config: SimConfig,
    private readonly state: SimStateService,
    private readonly faults: FaultRegistry,
    private readonly responder: ResponderService,
    private readonly scheduler: SchedulerService,
  ) {}

  create(req: FastifyRequest, reply: FastifyReply): void {
    const world = this.state.world;
    const input = unwrapBody(req.sim.body, 'pull_request');
    const requestId = input.request_id;
    // Checked before the gift card: without a request ID there is no pull request to speak of.
    if (typeof requestId !== 'string' || requestId === '') {
      throw new PartnerError(422, 'unprocessable_entity', 'request_id is required');
    }
    const used = world.pullRequests.has(requestId);
    const giftCardCode = typeof input.gift_card_code === 'string' ? input.gift_card_code : null;
    const ctx = { kind: 'pull_requests' as const, giftCardCode, requestId, newPull: !used };
    const fault = this.faults.select(req, ctx);
    if (answersBeforeAnything(fault)) return this.responder.send(req, reply, brokenAnswer(fault!, this.state.clock.nowMs()));
    // A failed creation does not use up the request ID.
    const order = checkPull(world, input.gift_card_code, input.amount);
    if (used) {
      // business_first: a used request ID's creation body is checked like a new one before the ID is looked at.
      if (order instanceof PartnerError && this.faults.reading(req, ctx, 'business_first')) return this.responder.send(req, reply, order.toAnswer());
      world.pullRequests.get(requestId)!.already_used_at ??= Date.now();
      const error = new PartnerError(422, 'unprocessable_entity', `request_id ${requestId} has already been used`);
      return this.responder.send(req, reply, error.toAnswer());
    }
    if (order instanceof PartnerError) return this.responder.send(req, reply, order.toAnswer(), fault);

    const cost = world.reserve(order.giftCard.code, order.amount);
    const now = isoWithOffset(Date.now());
    const record: PullRequestRecord = {
      id: randomUUID(),
      status: 'waiting',
      request_id: requestId,
      amount_cents: order.amount,
      gift_card_code: order.giftCard.code,
      created_at: now,
      updated_at: now,
      card: null,
      already_used_at: null,
    };
    world.addPullRequest(record);
    this.runInBackground(world, record, order, {
      cost,
      fails: fault?.mode === 'async_error' || isBrokenBrand(order.giftCard),
      extraMs: fault?.mode === 'latency' ? latencyOf(fault) : 0,
      amountDelta: fault?.mode === 'wrong_card' ? (fault.amount_delta ?? 100) : 0,
      base: publicBase(this.config.SIM_PUBLIC_BASE_URL, req.headers.host),
    });
    // hang / error_after_issue / reset: the pull request exists (its request ID is used), the answer is lost.
    const shown = this.shown(req, ctx, world, requestId, record);
    this.responder.send(req, reply, ok({ pull_request: creationView(shown ?? record) }), fault);
  }

  async show(req: FastifyRequest, reply: FastifyReply, requestId: string): Promise<void> {
    const giftCardCode = this.state.world.pullRequests.get(requestId)?.gift_card_code;
    const ctx = { kind: 'pull_request_status' as const, requestId, giftCardCode };
    await this.responder.read(req, reply, ctx, () => {
      const world = this.state.world;
      const record = world.pullRequests.get(requestId);
      const notFound = new PartnerError(404, this.state.readings.pull_request_not_found_code, `Pull request ${requestId} not found`).toAnswer();
      // read_lag: the read copy that answers does not have it yet.
      if (record && this.faults.reading(req, { ...ctx, newPull: true }, 'read_lag', (f) => lagging(record, f))) return notFound;
      const shown = this.shown(req, { ...ctx, newPull: true }, world, requestId, record) ?? record;
      return shown ? ok({ pull_request: showView(shown) }) : notFound;
    });
  }

  /** other_request_id: the pull request to show instead of the asked one, when the reading applies. */
  private shown(req: FastifyRequest, ctx: FaultContext, world: SimWorld, requestId: string, asked: PullRequestRecord | undefined): PullRequestRecord | null {
    const fault = this.faults.reading(req, ctx, 'other_request_id', (f) => shownInstead(world, requestId, asked, f) !== null);
    return fault ? shownInstead(world, requestId, asked, fault) : null;
  }

  private runInBackground(
    world: SimWorld,
    record: PullRequestRecord,
    order: PullOrder,
    how: { cost: number; fails: boolean; extraMs: number; amountDelta: number; base: string },
  ): void {
    const pull = world.ledger.acceptPull(record.request_id, 'async');
    const half = Math.floor(this.config.SIM_ASYNC_DELAY_MS / 2);
    const transition = (status: PullRequestRecord['status']) => {
      record.status = status;
      record.updated_at = isoWithOffset(Date.now());
    };
    this.scheduler.after(half, () => {
      transition('processing');
      this.scheduler.after(this.config.SIM_ASYNC_DELAY_MS - half + how.extraMs, () => {
        if (how.fails) {
          world.release(order.giftCard.code, order.amount, how.cost);
          transition('error');
          world.ledger.finishPull(pull, { errorCode: 'error' });
          return;
        }
        record.card = world.issueCard(order.giftCard, order.amount + how.amountDelta, record.request_id, 'async', how.base);
        transition('success');
        world.ledger.finishPull(pull, { cardId: record.card.id });
      });
    });
  }
}
