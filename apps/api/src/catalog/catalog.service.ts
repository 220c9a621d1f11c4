import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { CatalogRepository, CatalogSource } from '@cardpull/orders';
import { PricingRefused, catalogSnapshot, costOf, discountInForce, discountPpm, type GiftCard } from '@cardpull/partner-client';
import { ApiError } from '@cardpull/platform';

/** An order's price, fixed at intake (IntakeRepository's NewOrder.price). */
export interface OrderPrice {
  discountPpm: number;
  cost: number;
  catalogSnapshot: string;
}

/** Minimum time between two partner reads caused by a miss (an unknown code must not hammer the partner). */
const MISS_REFRESH_MIN_INTERVAL_MS = 5_000;

/**
 * The catalog the API validates orders against, in memory on the request path. The worker keeps it fresh
 * in Postgres (CatalogRefresh, every CATALOG_REFRESH_INTERVAL_MS); this copy is read from Postgres at start
 * and again, in the background, once it is older than that interval, so no timer runs in the API. The API
 * asks the partner itself only when Postgres holds no catalog (a first start before any worker) or an order
 * names a gift card it does not know (at most once per 5 s), so a gift card the partner just added is
 * accepted at once.
 */
@Injectable()
export class CatalogService implements OnApplicationBootstrap {
  private readonly log = new Logger(CatalogService.name);
  private cards = new Map<string, GiftCard>();
  private refreshedAt: Date | null = null;
  private loadedAt = 0;
  private lastMissRefresh = 0;
  private reloading?: Promise<void>;
  /** Each gift card's snapshot id, computed once per catalog load (a digest of its content). */
  private snapshots = new WeakMap<GiftCard, string>();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'CATALOG_REFRESH_INTERVAL_MS' | 'PARTNER_DISCOUNT_UNIT'>,
    private readonly stored: CatalogRepository,
    private readonly source: CatalogSource,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.reload().catch((error: Error) => this.log.warn({ err: error.message }, 'could not read the stored catalog'));
    if (this.cards.size === 0) await this.fromPartner();
  }

  /** A gift card by code; on a miss, asks the partner once (rate-limited) before answering "unknown". */
  async find(code: string): Promise<GiftCard | undefined> {
    this.reloadIfOld();
    const hit = this.cards.get(code);
    if (hit) return hit;
    if (Date.now() - this.lastMissRefresh >= MISS_REFRESH_MIN_INTERVAL_MS) {
      this.lastMissRefresh = Date.now();
      await this.fromPartner();
    }
    return this.cards.get(code);
  }

  /**
   * The price of a card of `amount` of this gift card now (issue 24): the discount in force (its scheduled
   * discounts decide), in the configured unit, and the cost at it. A discount the unit cannot read is a 503
   * `pricing_refused` naming the setting: no order is accepted at a price we cannot compute.
   */
  price(giftCard: GiftCard, amount: number, at = new Date()): OrderPrice {
    let ppm: number;
    try {
      ppm = discountPpm(discountInForce(giftCard, at), this.config.PARTNER_DISCOUNT_UNIT);
    } catch (error) {
      if (!(error instanceof PricingRefused)) throw error;
      this.log.error({ giftCard: giftCard.code, setting: error.setting, err: error.message }, 'a partner discount contradicts its configured unit');
      throw new ApiError(503, 'pricing_refused', `Gift card ${giftCard.code}: ${error.message}; the order was not accepted`);
    }
    let snapshot = this.snapshots.get(giftCard);
    if (!snapshot) this.snapshots.set(giftCard, (snapshot = catalogSnapshot(giftCard).id));
    return { discountPpm: ppm, cost: costOf(amount, ppm), catalogSnapshot: snapshot };
  }

  list(): { cards: GiftCard[]; refreshedAt: Date | null } {
    this.reloadIfOld();
    return { cards: [...this.cards.values()], refreshedAt: this.refreshedAt };
  }

  private async fromPartner(): Promise<void> {
    const cards = await this.source.refresh();
    if (cards) this.use(cards, new Date());
  }

  private reloadIfOld(): void {
    if (Date.now() - this.loadedAt < this.config.CATALOG_REFRESH_INTERVAL_MS) return;
    this.reloading ??= this.reload()
      .catch((error: Error) => this.log.warn({ err: error.message }, 'could not read the stored catalog; keeping the one in memory'))
      .finally(() => (this.reloading = undefined));
  }

  private async reload(): Promise<void> {
    const { cards, refreshedAt } = await this.stored.all();
    if (cards.length) this.use(cards, refreshedAt);
    else this.loadedAt = Date.now();
  }

  private use(cards: GiftCard[], refreshedAt: Date | null): void {
    this.cards = new Map(cards.map((c) => [c.code, c]));
    this.refreshedAt = refreshedAt;
    this.loadedAt = Date.now();
  }
}
