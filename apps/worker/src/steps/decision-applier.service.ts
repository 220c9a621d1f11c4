import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { OrderMetrics } from '@cardpull/ops';
import { withSpan } from '@cardpull/platform';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import type { OrderStep } from '@cardpull/db';
import { Vault, sealCardField } from '@cardpull/vault';
import { type CardRole, PartnerCircuit, RetentionRepository, StepsRepository, TransitionsRepository } from '@cardpull/orders';
import { cardAnswer, type Decision, type DecisionTimings } from './decision';
import type { AttemptRow, StepOrder } from '@cardpull/orders';

/** What the job that ran a step must do next with the queue. Delays are relative: no worker's clock is written. */
export type StepResult = (
  | { kind: 'done'; reason: string }
  | { kind: 'next'; orderId: string; stepSeq: number; step: OrderStep; delayMs: number }
  /** Run this same job again later; the order did not move (a poll that learned nothing). */
  | { kind: 'delay'; delayMs: number; reason: string }
) & {
  /** Callback events the step's transition wrote (outbox), to be delivered now that it is committed. */
  callbacks?: string[];
  /** What a card received became (the order's, a surplus, a mismatch). */
  cardRole?: CardRole;
};

/**
 * Applies a Decision (decision/decide.ts) to Postgres: the card store, a guarded transition (with a new
 * request ID committed in the same statement when the decision mints one), or a note on the attempt. The
 * decision says what; this only says how.
 */
@Injectable()
export class DecisionApplier {
  private readonly log = new Logger(DecisionApplier.name);
  readonly actor = `worker:${process.pid}-${randomUUID().slice(0, 8)}`;

  constructor(
    @Inject(SERVICE_CONFIG) readonly config: DecisionTimings,
    private readonly transitions: TransitionsRepository,
    private readonly steps: StepsRepository,
    private readonly vault: Vault,
    private readonly circuit: PartnerCircuit,
    private readonly retention: RetentionRepository,
    @Optional() private readonly metrics?: OrderMetrics,
  ) {}

  async apply(order: StepOrder, attempt: AttemptRow, d: Decision, actor = this.actor): Promise<StepResult> {
    if (d.kind !== 'store_card' && d.circuit) await this.circuit.open(d.circuit.code, d.circuit.message);
    switch (d.kind) {
      case 'store_card':
        return d.answeredFor ? this.storeOtherIdsCard(order, attempt, d, d.answeredFor, actor) : this.storeCard(order, attempt, d, actor);
      case 'stay':
        if (d.note && Object.keys(d.note).length) await this.steps.note(attempt.requestId, d.note);
        return { kind: 'delay', delayMs: d.delayMs, reason: d.rule };
      default:
        return this.transition(order, attempt, d, actor);
    }
  }

  private async transition(order: StepOrder, attempt: AttemptRow, d: Extract<Decision, { kind: 'transition' }>, actor: string): Promise<StepResult> {
    const result = await this.transitions.transition({
      orderId: order.id,
      stepSeq: order.stepSeq,
      actor,
      status: d.status,
      next: d.next,
      error: d.error,
      ...(d.waitDeadline ? { waitDeadline: { startMs: this.config.AWAIT_DEADLINE_MS } } : {}),
      ...(d.attempt ? { attempt: { requestId: attempt.requestId, ...d.attempt } } : {}),
      ...(d.newAttempt ? { newAttempt: { kind: order.mode, replaces: attempt.requestId } } : {}),
      ...(d.event ? { event: { type: d.event.type, detail: { rule: d.rule, ...d.event.detail } } } : {}),
    });
    if (!result.applied) return { kind: 'done', reason: 'the order moved on meanwhile' };
    if (d.status === 'needs_attention') {
      this.log.error({ orderId: order.id, requestId: attempt.requestId, rule: d.rule, reason: d.error?.message }, 'order needs attention');
    }
    const callbacks = result.callbackEventIds;
    return d.next
      ? { kind: 'next', orderId: order.id, stepSeq: result.stepSeq, step: d.next.step, delayMs: d.next.delayMs, callbacks }
      : { kind: 'done', reason: result.status ?? 'ended', callbacks };
  }

  /**
   * A card the partner gave in a pull request of another request ID than the one asked: it is that ID's.
   * One of ours: stored as that ID's answer, on its order (its own card, a surplus or a mismatch, as for any
   * card), and the order asked about goes on as `then` says (needs attention, its own ID asked again). Not
   * ours: stored on the order asked about, as a mismatch naming the other ID (invariant 3: never dropped).
   */
  private async storeOtherIdsCard(order: StepOrder, attempt: AttemptRow, d: Extract<Decision, { kind: 'store_card' }>, other: { requestId: string; then: Decision }, actor: string): Promise<StepResult> {
    const owner = await this.steps.byRequestId(other.requestId);
    if (!owner) return this.storeCard(order, attempt, d, actor);
    const stored = await this.apply(owner.order, owner.attempt, cardAnswer(owner.order, d.card, 'success'), actor);
    const asked = await this.apply(order, attempt, other.then, actor);
    return { ...asked, callbacks: [...(stored.callbacks ?? []), ...(asked.callbacks ?? [])] };
  }

  /** Invariant 3: seal the card (code and PIN) and store it with what it does to its order, in one statement. */
  private async storeCard(order: StepOrder, attempt: AttemptRow, d: Extract<Decision, { kind: 'store_card' }>, actor: string): Promise<StepResult> {
    const { card } = d;
    const id = randomUUID();
    const sealing = { id, orderId: order.id };
    const code = sealCardField(this.vault, sealing, 'code', card.code);
    const pin = card.pin_code ? sealCardField(this.vault, sealing, 'pin', card.pin_code) : null;
    // The PDF link opens the card: sealed like code and PIN (never stored in clear).
    const pdf = card.pdf_url ? sealCardField(this.vault, sealing, 'pdf', card.pdf_url) : null;
    const expireAt = card.expire_at ? new Date(card.expire_at) : null;
    const store = () => this.transitions.storeCard(
      order.id,
      {
        id,
        requestId: attempt.requestId,
        partnerCardId: card.id,
        keyId: code.keyId,
        codeEnc: code.blob,
        pinEnc: pin?.blob ?? null,
        expireAt: expireAt && !Number.isNaN(expireAt.getTime()) ? expireAt : null,
        amount: card.amount,
        giftCardCode: card.gift_card_code,
        pdfEnc: pdf?.blob ?? null,
      },
      d.mismatch,
      { state: d.attempt.state, partnerStatus: d.attempt.partnerStatus ?? 'issued' },
      actor,
    );
    const stored = await withSpan('store card', { 'cardpull.order_id': order.id, 'cardpull.request_id': attempt.requestId, 'cardpull.partner_card_id': card.id }, async () => {
      const first = await store();
      if (first) return first;
      // The order was archived after this call was made: bring it back with its card (never dropped).
      if (await this.retention.restore(order.id, actor)) {
        this.log.warn({ orderId: order.id, requestId: attempt.requestId, partnerCardId: card.id }, 'a card arrived for an archived order: the order is restored from the archive with it');
      }
      const again = await store();
      if (!again) throw new Error(`order ${order.id} is neither live nor archived: card ${card.id} of request ID ${attempt.requestId} could not be stored (the job retries)`);
      return again;
    });
    const fields = { orderId: order.id, requestId: attempt.requestId, partnerCardId: card.id, orderStatus: stored.status };
    if (stored.role === 'order' && stored.status === 'completed') this.metrics?.timeToCard.observe({ mode: order.mode }, (Date.now() - order.createdAt.getTime()) / 1000);
    if (stored.role === 'surplus') {
      this.log.error({ ...fields, alert: 'surplus_card' }, 'ALERT: a second card for an order was issued and is kept as surplus (operations page: surplus cards)');
    } else if (stored.role === 'mismatch') {
      this.log.error({ ...fields, alert: 'card_mismatch', mismatch: d.mismatch }, 'ALERT: the partner issued a card that does not match its order; kept, the order needs attention');
    }
    return { kind: 'done', reason: stored.role === 'order' ? 'completed' : `card ${stored.role}`, callbacks: stored.callbackEventIds, cardRole: stored.role };
  }
}
