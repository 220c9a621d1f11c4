import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import { PULL_IN_PROGRESS_CODE } from '@cardpull/partner-client/types';
import { ok, type SimAnswer } from '../common/answer';
import { PartnerError } from '../common/partner-error';
import { FaultRegistry } from '../faults/fault-registry';
import { brokenAnswer, latencyOf, ResponderService } from '../faults/responder.service';
import { SchedulerService } from '../state/scheduler.service';
import { SimStateService } from '../state/sim-state.service';
import type { SimWorld } from '../state/world';
import { brokenBrandError, checkPull, isBrokenBrand, publicBase, unwrapBody } from './pull-engine';

/**
 * The spec does not show the "come back later" answer: 409, code pull_in_progress (PULL_IN_PROGRESS_CODE,
 * shared with the client), status `conflict`, and Retry-After: 10 (the spec's ~10 s retry guidance).
 */
const comeBackLater = (): SimAnswer =>
  new PartnerError(
    409,
    PULL_IN_PROGRESS_CODE,
    'The card is still being pulled: come back later with the same X-RequestId',
    { 'Retry-After': '10' },
  ).toAnswer();

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
    const fault = this.faults.select(req, {
      kind: 'cards',
      giftCardCode: giftCardCodeOf(req),
      requestId,
      newPull: !known,
    });
    if (fault?.mode === 'error_before_issue') return this.responder.send(req, reply, brokenAnswer(fault));
    if (known?.state === 'done') return this.responder.send(req, reply, known.answer);
    if (known || !input) return this.responder.send(req, reply, comeBackLater());

    const base = publicBase(this.config.SIM_PUBLIC_BASE_URL, req.headers.host);
    world.syncPulls.set(requestId, { state: 'in_progress' });
    if (fault?.mode === 'come_back_later') {
      // Every call until the pull finishes, this one included, is told to come back later.
      this.scheduler.after(latencyOf(fault), () => this.complete(world, requestId, input, base));
      return this.responder.send(req, reply, comeBackLater());
    }
    const extra = fault?.mode === 'latency' ? latencyOf(fault) : 0;
    await this.scheduler.sleep(this.config.SIM_SYNC_DELAY_MS + extra);
    this.responder.send(req, reply, this.complete(world, requestId, input, base), fault);
  }

  /** Runs the pull (checks, then stock, balance and card in one synchronous step) and stores its answer. */
  private complete(world: SimWorld, requestId: string, input: Record<string, unknown>, base: string): SimAnswer {
    const order = checkPull(world, input.gift_card_code, input.amount);
    let answer: SimAnswer;
    if (order instanceof PartnerError) {
      answer = order.toAnswer();
    } else if (isBrokenBrand(order.giftCard)) {
      answer = brokenBrandError(order.giftCard).toAnswer();
    } else {
      world.reserve(order.giftCard.code, order.amount);
      answer = ok({ card: world.issueCard(order.giftCard, order.amount, requestId, 'sync', base) });
    }
    world.syncPulls.set(requestId, { state: 'done', answer });
    return answer;
  }
}

/** The gift card code of the body, if it has one (for the faults' gift_card_codes filter; a repeat is not unwrapped). */
function giftCardCodeOf(req: FastifyRequest): string | null {
  if (req.sim.body.kind !== 'json') return null;
  const code = (req.sim.body.value as { card?: { gift_card_code?: unknown } } | null)?.card?.gift_card_code;
  return typeof code === 'string' ? code : null;
}
