import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import { PULL_IN_PROGRESS_CODE } from '@cardpull/partner-client';
import { ok, type SimAnswer } from '../common/answer';
import { PartnerError } from '../common/partner-error';
import { FaultRegistry } from '../faults/fault-registry';
import { retryAfterHeader, type Fault } from '@cardpull/sim-contract';
import { answersBeforeAnything, brokenAnswer, latencyOf, ResponderService } from '../faults/responder.service';
import { SchedulerService } from '../state/scheduler.service';
import { SimStateService } from '../state/sim-state.service';
import type { LedgerPull } from '../ledger/ledger';
import type { SimWorld } from '../state/world';
import { brokenBrandError, checkPull, isBrokenBrand, publicBase, unwrapBody } from './pull-engine';

/**
 * The spec does not show the "come back later" answer: 409, code pull_in_progress (PULL_IN_PROGRESS_CODE,
 * shared with the client), status `conflict`, and Retry-After: 10 (the spec's ~10 s retry guidance), or the
 * come_back_later fault's own Retry-After. Under the accepted_202 reading: 202 {"status": "processing"}.
 */
function comeBackLater(fault: Fault | null, accepted202: boolean, nowMs: number): SimAnswer {
  const headers = fault ? retryAfterHeader(fault, 10, nowMs) : { 'Retry-After': '10' };
  if (accepted202) return { status: 202, body: { status: 'processing' }, headers };
  return new PartnerError(409, PULL_IN_PROGRESS_CODE, 'The card is still being pulled: come back later with the same X-RequestId', headers).toAnswer();
}

/**
 * POST /cards, the synchronous pull, with the spec's request ID rules:
 *  - the first call's final answer (card or error) is stored; every repeat of the request ID gets it again
 *    and never a second card, whatever its body;
 *  - while the first call is still pulling, a repeat gets "come back later";
 *  - a body that is not a pull (400 bad_request) is not stored: the request ID stays unused.
 */
@Injectable()
export class SyncPullsService {
  constructor(
    @Inject(SIM_CONFIG) private readonly config: SimConfig,
    private readonly state: SimStateService,
    private readonly faults: FaultRegistry,
    private readonly responder: ResponderService,
    private readonly scheduler: SchedulerService,
  ) {}

  async pull(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const world = this.state.world;
    const requestId = req.sim.requestId ?? '';
    const known = world.syncPulls.get(requestId);
    // A repeat is answered whatever its body; a new pull needs a well-formed one (400 otherwise).
    const input = known ? null : unwrapBody(req.sim.body, 'card');
    const ctx = { kind: 'cards' as const, giftCardCode: giftCardCodeOf(req), requestId, newPull: !known };
    const fault = this.faults.select(req, ctx);
    if (answersBeforeAnything(fault)) return this.responder.send(req, reply, brokenAnswer(fault!, this.state.clock.nowMs()));
    if (known) {
      // business_first: the repeat's body goes through the checks of a new pull before its request ID is looked at.
      const refusal = businessRefusal(world, req);
      if (refusal && this.faults.reading(req, ctx, 'business_first')) return this.responder.send(req, reply, refusal.toAnswer());
    }
    if (known?.state === 'done') return this.responder.send(req, reply, known.answer);
    const accepted202 = () => !!this.faults.reading(req, ctx, 'accepted_202');
    if (known || !input) return this.responder.send(req, reply, comeBackLater(null, accepted202(), this.state.clock.nowMs()));

    const base = publicBase(this.config.SIM_PUBLIC_BASE_URL, req.headers.host);
    world.syncPulls.set(requestId, { state: 'in_progress' });
    const pull = world.ledger.acceptPull(requestId, 'sync');
    const amountDelta = fault?.mode === 'wrong_card' ? (fault.amount_delta ?? 100) : 0;
    const complete = () => this.complete(world, requestId, input, base, pull, amountDelta);
    if (fault?.mode === 'come_back_later') {
      // Every call until the pull finishes, this one included, is told to come back later.
      this.scheduler.after(latencyOf(fault), complete);
      return this.responder.send(req, reply, comeBackLater(fault, accepted202(), this.state.clock.nowMs()));
    }
    const extra = fault?.mode === 'latency' ? latencyOf(fault) : 0;
    await this.scheduler.sleep(this.config.SIM_SYNC_DELAY_MS + extra);
    this.responder.send(req, reply, complete(), fault);
  }

  /** Runs the pull (checks, then stock, balance and card in one synchronous step) and stores its answer. */
  private complete(world: SimWorld, requestId: string, input: Record<string, unknown>, base: string, pull: LedgerPull, amountDelta: number): SimAnswer {
    const order = checkPull(world, input.gift_card_code, input.amount);
    let answer: SimAnswer;
    if (order instanceof PartnerError) {
      answer = order.toAnswer();
      world.ledger.finishPull(pull, { errorCode: order.code });
    } else if (isBrokenBrand(order.giftCard)) {
      const error = brokenBrandError(order.giftCard);
      answer = error.toAnswer();
      world.ledger.finishPull(pull, { errorCode: error.code });
    } else {
      world.reserve(order.giftCard.code, order.amount);
      const card = world.issueCard(order.giftCard, order.amount + amountDelta, requestId, 'sync', base);
      world.ledger.finishPull(pull, { cardId: card.id });
      answer = ok({ card });
    }
    world.syncPulls.set(requestId, { state: 'done', answer });
    return answer;
  }
}

/** What the business checks of a new pull say of this (repeated) request's body: an error, or null when they pass or it has no pull to check. */
export function businessRefusal(world: SimWorld, req: FastifyRequest): PartnerError | null {
  if (req.sim.body.kind !== 'json') return null;
  const inner = (req.sim.body.value as { card?: { gift_card_code?: unknown; amount?: unknown } } | null)?.card;
  if (!inner || typeof inner !== 'object') return null;
  const checked = checkPull(world, inner.gift_card_code, inner.amount);
  return checked instanceof PartnerError ? checked : null;
}

/** The gift card code of the body, if it has one (for the faults' gift_card_codes filter; a repeat is not unwrapped). */
function giftCardCodeOf(req: FastifyRequest): string | null {
  if (req.sim.body.kind !== 'json') return null;
  const code = (req.sim.body.value as { card?: { gift_card_code?: unknown } } | null)?.card?.gift_card_code;
  return typeof code === 'string' ? code : null;
}
