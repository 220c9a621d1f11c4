import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import type { OrderRow } from '@cardpull/orders';
import { PartnerSnapshots } from '@cardpull/orders';

export type Condition = 'cleared' | 'not_cleared' | 'unknown';

/**
 * Whether the partner's own balance or inventory shows an order's "not now" condition cleared: funds
 * enough for its amount, or stock of its facial value. Read through PartnerSnapshots, so every waiting
 * order shares one GET per round. A read that failed or is stale says 'unknown' and is never trusted.
 */
@Injectable()
export class PartnerConditions {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'AWAIT_RECHECK_INTERVAL_MS'>,
    private readonly snapshots: PartnerSnapshots,
  ) {}

  /**
   * `maxAgeMs`: how old a shared read may be: half the re-check interval, 2 s at most. A read only tells an
   * order whose request ID the partner's own word killed when to try a new one; it never judges an ID.
   */
  async check(what: 'funds' | 'stock', order: Pick<OrderRow, 'giftCardCode' | 'amount'>, maxAgeMs = this.waitCheckMaxAgeMs): Promise<Condition> {
    const cleared = what === 'funds' ? await this.funds(order, maxAgeMs) : await this.stock(order, maxAgeMs);
    return cleared === null ? 'unknown' : cleared ? 'cleared' : 'not_cleared';
  }

  private get waitCheckMaxAgeMs(): number {
    return Math.min(2_000, Math.floor(this.config.AWAIT_RECHECK_INTERVAL_MS / 2));
  }

  private async funds(order: Pick<OrderRow, 'amount'>, maxAgeMs: number): Promise<boolean | null> {
    const balance = await this.snapshots.balance(maxAgeMs);
    if (!balance || balance.stale) return null;
    // Balance is in currency units, amounts in minor units (see the simulator's README for this reading).
    return balance.data.balance.amount * 100 >= order.amount;
  }

  private async stock(order: Pick<OrderRow, 'giftCardCode' | 'amount'>, maxAgeMs: number): Promise<boolean | null> {
    const inventory = await this.snapshots.inventory(order.giftCardCode, maxAgeMs);
    if (!inventory || inventory.stale) return null;
    const inv = inventory.data.inventories;
    if (inv.end_to_end_api?.available_amount === 'unlimited') return true;
    const stock = inv.stocks.find((s) => s.facial_value === order.amount);
    if (stock) return stock.owned_quantity + (stock.shared_quantity ?? 0) > 0;
    // A free-amount card has no per-value stock: trust an available amount large enough.
    const available = Number(inv.end_to_end_api?.available_amount);
    return Number.isFinite(available) && available >= order.amount;
  }
}
