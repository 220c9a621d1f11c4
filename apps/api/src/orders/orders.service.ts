import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, callbackRules, callbackUrlProblem, type ApiClient, type ServiceConfig } from '@cardpull/config';
import type { OrderStatus } from '@cardpull/db';
import { AfterCommit, IntakeRepository, OrderReads, SpendLimitExceeded, TERMINAL_STATUSES, requestHash, type OrderDetail } from '@cardpull/orders';
import { checkAmount, type GiftCard } from '@cardpull/partner-client';
import { ApiError, FleetCounters, currentTraceparent } from '@cardpull/platform';
import { CatalogService, giftCardNotFound } from '../catalog/catalog.service';
import { isUuid, type CreateOrderInput } from './order-input';

/** A long-poll's slot outlives its wait by this much (the last status read), then frees itself if never given back. */
const WAIT_LEASE_GRACE_MS = 5_000;

export type IntakeResult = { created: boolean; detail: OrderDetail };

/**
 * Intake: validate against the cached catalog (with the partner's own error codes and messages), commit
 * the order and its first request ID in one statement, answer, and enqueue its first step with a fixed job
 * id meanwhile (the answer does not wait for Redis). If Redis is down the order is still accepted: it is
 * durable, and the sweeper enqueues it.
 */
@Injectable()
export class OrdersService {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'CALLBACK_ALLOW_LOCAL' | 'CALLBACK_ALLOWED_HOSTS' | 'CALLBACK_SECRETS' | 'CALLBACK_URLS' | 'LONG_POLLS_PER_CLIENT' | 'SPEND_LIMITS'>,
    @Inject(FleetCounters) private readonly counters: FleetCounters,
    private readonly intake: IntakeRepository,
    private readonly reads: OrderReads,
    private readonly afterCommit: AfterCommit,
    private readonly catalog: CatalogService,
  ) {}

  async create(client: ApiClient, idempotencyKey: string, input: CreateOrderInput): Promise<IntakeResult> {
    const hash = requestHash(input);
    const { refusal, giftCard } = await this.validate(input);
    if (refusal || !giftCard) {
      // A replay of an order accepted before the catalog changed is still a replay.
      const existing = await this.intake.findByKey(client.client, idempotencyKey);
      if (!existing) throw refusal!;
      return this.replayOrConflict(existing.requestHash === hash, existing.id, client.client);
    }
    const callbackProblem = input.callback_url ? callbackUrlProblem(input.callback_url, client.client, callbackRules(this.config)) : null;
    if (callbackProblem) throw new ApiError(422, 'callback_url_refused', `callback_url ${callbackProblem}`);
    if (input.callback_url && !this.config.CALLBACK_SECRETS.has(client.client)) {
      throw new ApiError(422, 'callback_not_configured', `Client ${client.client} has no callback secret (CALLBACK_SECRETS): its callbacks could not be signed`);
    }
    const limits = this.config.SPEND_LIMITS.get(client.client);
    if (limits?.maxOrder != null && input.amount > limits.maxOrder) {
      throw new ApiError(422, 'spend_limit_exceeded', `The amount ${input.amount} is above this client's largest order (${limits.maxOrder}, SPEND_LIMITS)`);
    }
    const newOrder = {
      dailyLimit: limits?.perDay ?? null,
      callbackUrl: input.callback_url ?? this.config.CALLBACK_URLS.get(client.client) ?? null,
      // Decided by the key creating the order, not by its client's other keys (docs/SECURITY.md).
      callbackSecrets: client.scopes.has('cards:read'),
      client: client.client,
      idempotencyKey,
      requestHash: hash,
      mode: input.mode,
      giftCardCode: input.gift_card_code,
      amount: input.amount,
      metadata: input.metadata,
      // The intake's trace (the request's span), kept with the order: a job re-created later goes on in it.
      traceParent: currentTraceparent() ?? null,
      // Its price, fixed now: the discount in force and the card's cost (the ledger reserves it).
      price: this.catalog.price(giftCard, input.amount),
    };
    const result = await this.intake.create(newOrder).catch((error: unknown) => {
      if (!(error instanceof SpendLimitExceeded)) throw error;
      const remaining = Math.max(0, error.limit - error.spentToday);
      throw new ApiError(422, 'spend_limit_exceeded', `This client's orders of today (UTC) reserved ${error.spentToday} of its daily limit ${error.limit} (SPEND_LIMITS, at cost): ${remaining} remains, less than this order's cost ${error.cost}`);
    });
    if (result.kind !== 'created') return this.replayOrConflict(result.kind === 'replay', result.order.id, client.client);
    const { order } = result;
    // Answered at the commit: the order and its request ID are durable now. Its first step's job follows
    // without the caller waiting for Redis (a job is only a trigger: one that never lands is enqueued by the
    // sweeper, and a failed enqueue is logged by OrderQueue), so an intake costs its caller one round trip
    // to Postgres, not a Redis round trip after it. test/orders/intake-answer.e2e-spec.ts.
    void this.afterCommit.run({ next: { orderId: order.id, stepSeq: order.stepSeq, step: order.nextStep!, delayMs: 0, client: client.client } }).catch(() => false);
    return {
      created: true,
      detail: {
        order,
        attempts: [
          {
            requestId: result.requestId,
            orderId: order.id,
            seq: 1,
            kind: order.mode,
            state: 'created',
            partnerStatus: null,
            errorCode: null,
            errorMessage: null,
            callCount: 0,
            firstSentAt: null,
            lastSentAt: null,
            unknownSince: null,
            notFoundSince: null,
            declaredDeadAt: null,
            declaredDeadBy: null,
            createdAt: order.createdAt,
            updatedAt: order.createdAt,
          },
        ],
        card: null,
        otherCards: [],
      },
    };
  }

  async get(orderId: string, client: string): Promise<OrderDetail> {
    const detail = isUuid(orderId) ? await this.reads.detail(orderId, client) : null;
    if (!detail) throw new ApiError(404, 'order_not_found', `No order ${orderId}`);
    return detail;
  }

  /** The client's own order by its Idempotency-Key (never another client's: the key is unique per client only). */
  async getByKey(idempotencyKey: string, client: string): Promise<OrderDetail> {
    const detail = await this.reads.byKey(client, idempotencyKey);
    if (!detail) throw new ApiError(404, 'order_not_found', `No order with the Idempotency-Key ${JSON.stringify(idempotencyKey)}`);
    return detail;
  }

  /**
   * Long-poll (`?wait=N`): the order once it is terminal (or needs attention), or as it is when `seconds`
   * run out. The pull itself runs in the worker; this only watches the row. At most LONG_POLLS_PER_CLIENT
   * waits of one client at a time across the fleet (a slot in Redis, FleetCounters.take): beyond, the
   * order is answered at once (`capped`), so one client cannot hold every connection and database round
   * trip of the API processes. A slot's lease is the wait plus WAIT_LEASE_GRACE_MS: the slots of a process
   * that dies free themselves then.
   */
  async waitForTerminal(orderId: string, client: string, seconds: number, current: OrderDetail): Promise<{ detail: OrderDetail; capped: boolean }> {
    const terminal = (s: OrderStatus) => TERMINAL_STATUSES.includes(s) || s === 'needs_attention';
    if (seconds <= 0 || terminal(current.order.status)) return { detail: current, capped: false };
    const slot = `polls:${client}`;
    const holder = randomUUID();
    if (!(await this.counters.take(slot, holder, this.config.LONG_POLLS_PER_CLIENT, seconds * 1000 + WAIT_LEASE_GRACE_MS))) return { detail: current, capped: true };
    try {
      const deadline = Date.now() + seconds * 1000;
      let interval = 50;
      while (Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, Math.min(interval, deadline - Date.now())));
        interval = Math.min(interval * 2, 500);
        const status = (await this.reads.statuses([orderId])).get(orderId);
        if (status && terminal(status)) break;
      }
    } finally {
      await this.counters.free(slot, holder);
    }
    return { detail: await this.get(orderId, client), capped: false };
  }

  /**
   * The order against the catalog (issue 25): a gift card or an amount the change feed recorded as withdrawn
   * is refused naming when (422 gift_card_withdrawn, amount_withdrawn); a code the catalog could not be read
   * for is a 503 catalog_unavailable, never a 404. An order accepted before keeps its price and snapshot.
   */
  private async validate(input: CreateOrderInput): Promise<{ refusal: ApiError | null; giftCard?: GiftCard }> {
    const code = input.gift_card_code;
    const found = await this.catalog.find(code);
    if (found.kind === 'unknown' && found.withdrawnAt) {
      return { refusal: new ApiError(422, 'gift_card_withdrawn', `Gift card ${code} was withdrawn from the partner's catalog at ${found.withdrawnAt.toISOString()}`) };
    }
    if (found.kind !== 'found') return { refusal: giftCardNotFound(code, found) };
    const { giftCard } = found;
    const check = checkAmount(giftCard.code, giftCard.facial_values, input.amount);
    if (check.ok) return { refusal: null, giftCard };
    const withdrawnAt = await this.catalog.amountWithdrawnAt(code, input.amount);
    if (withdrawnAt) {
      // What is offered now, from the amount check's words ("allowed amounts are ...", "must be between ...").
      const offered = check.message.slice(check.message.indexOf(': ') + 2);
      return { refusal: new ApiError(422, 'amount_withdrawn', `Amount ${input.amount} of gift card ${code} was withdrawn from the partner's catalog at ${withdrawnAt.toISOString()}; ${offered}`), giftCard };
    }
    return { refusal: new ApiError(422, 'invalid_amount', check.message), giftCard };
  }

  private async replayOrConflict(sameBody: boolean, orderId: string, client: string): Promise<IntakeResult> {
    if (!sameBody) {
      throw new ApiError(409, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request body');
    }
    return { created: false, detail: await this.get(orderId, client) };
  }
}
