import type { Pool } from 'pg';
import { IntakeRepository } from '@cardpull/orders';
import { PricingRefused, catalogSnapshot, costOf, discountInForce, discountPpm, type DiscountUnit, type GiftCard } from '@cardpull/partner-client';
import type { ProbeBuyer } from './probe';

/** The client name the probe's order carries (on the operations page, in statements and the ledger). */
export const PROBE_CLIENT = 'probe';
/** Who made the probe's sends, as the order's timeline names the sender of an interrupted call. */
export const PROBE_LEASE_OWNER = 'npm run probe';

/**
 * The probe's one card is an order like any other: committed by the intake statement (its request ID in
 * Postgres before the first call carries it, its "accepted" movement in the ledger), then its attempt is
 * marked sent, since the probe sends it itself. The worker finds it due and, seeing a send whose answer was
 * never recorded, sends the same request ID again: the partner answers the same card, which is stored,
 * accounted and shown like every card. Nothing the probe buys can be dropped by the probe stopping.
 */
export class OrderBuyer implements ProbeBuyer {
  constructor(
    private readonly pool: Pool,
    private readonly discountUnit: DiscountUnit,
  ) {}

  async order(giftCard: GiftCard, amount: number): Promise<{ orderId: string; requestId: string }> {
    const at = new Date();
    let price: { discountPpm: number; cost: number; catalogSnapshot: string } | null = null;
    try {
      const ppm = discountPpm(discountInForce(giftCard, at), this.discountUnit);
      price = { discountPpm: ppm, cost: costOf(amount, ppm), catalogSnapshot: catalogSnapshot(giftCard).id };
    } catch (error) {
      // A discount the configured unit cannot read (the probe may be about to say so): the order stays
      // outside the ledger rather than carry a price we cannot compute.
      if (!(error instanceof PricingRefused)) throw error;
    }
    const created = await new IntakeRepository(this.pool).create({
      client: PROBE_CLIENT,
      idempotencyKey: `probe-${at.toISOString()}`,
      requestHash: 'probe',
      mode: 'sync',
      giftCardCode: giftCard.code,
      amount,
      metadata: { probe: true },
      callbackUrl: null,
      callbackSecrets: false,
      price,
    });
    if (created.kind !== 'created') throw new Error(`the probe's order was not created (${created.kind})`);
    // Sent by the probe, as a worker's take would record it (the lease already run out, named after the
    // probe): the worker's own take then sees a send whose answer it never recorded, and asks again.
    await this.pool.query(
      `WITH lease AS (UPDATE orders SET lease_owner = $3, lease_expires_at = now() WHERE id = $2)
       UPDATE attempts SET state = 'sent', call_count = call_count + 1, first_sent_at = now(), last_sent_at = now(), updated_at = now()
       WHERE request_id = $1 AND state = 'created'`,
      [created.requestId, created.order.id, PROBE_LEASE_OWNER],
    );
    return { orderId: created.order.id, requestId: created.requestId };
  }
}
