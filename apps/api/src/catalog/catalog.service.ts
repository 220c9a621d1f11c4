import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { CatalogChangesRepository, CatalogRepository, CatalogSource } from '@cardpull/orders';
import { PricingRefused, catalogSnapshot, costOf, discountInForce, discountPpm, type GiftCard } from '@cardpull/partner-client';
import { ApiError } from '@cardpull/platform';

/** An order's price, fixed at intake (IntakeRepository's NewOrder.price). */
export interface OrderPrice {
  discountPpm: number;
  cost: number;
  catalogSnapshot: string;
}

/**
 * What the catalog says of a code: the gift card; or that a catalog read lacks it (`withdrawnAt` when the change
 * feed recorded its removal); or nothing, because the catalog could not be read (see `unavailable`).
 */
export type CatalogAnswer = { kind: 'found'; giftCard: GiftCard } | { kind: 'unknown'; withdrawnAt: Date | null } | { kind: 'unavailable' };

/** Minimum time between two partner reads caused by a miss (an unknown code must not hammer the partner). */
const MISS_REFRESH_MIN_INTERVAL_MS = 5_000;
/** The Retry-After of catalog_unavailable: by then the background read caused by the miss has had its chance. */
export const CATALOG_RETRY_AFTER_S = MISS_REFRESH_MIN_INTERVAL_MS / 1000;
/**
 * A stored copy older than this many refresh intervals is stale: the worker's refreshes have been failing (it
 * stores every CATALOG_REFRESH_INTERVAL_MS, and this copy is re-read as often), so its silence about a code
 * proves nothing.
 */
const STALE_AFTER_INTERVALS = 3;

/**
 * The catalog the API validates orders against, in memory on the request path. The worker keeps it fresh
 * in Postgres (CatalogRefresh, every CATALOG_REFRESH_INTERVAL_MS); this copy is read from Postgres at start
 * and again, in the background, once it is older than that interval, so no timer runs in the API.
 *
 * A request never waits on the partner (issue 25). A code this copy does not list starts a read of the
 * partner in the background (at most once per 5 s: a gift card the partner just added is accepted moments
 * later) and is answered from what is known now:
 *  - `unknown` (a 404, or the time it was withdrawn) only when a successful read lacks it: the copy is there,
 *    fresh, and no read of the partner has failed since it was stored;
 *  - otherwise `unavailable` (503 catalog_unavailable with Retry-After): no catalog was ever read (a cold start
 *    against a slow or failing partner), the last read failed, or the copy is stale. A checkout is never told
 *    that a real product does not exist because we could not look.
 */
@Injectable()
export class CatalogService implements OnApplicationBootstrap {
  private readonly log = new Logger(CatalogService.name);
  private cards = new Map<string, GiftCard>();
  private refreshedAt: Date | null = null;
  private loadedAt = 0;
  private lastMissRefresh = 0;
  /** When this process's latest read of the partner failed (0: it did not, or a later read succeeded). */
  private readFailedAt = 0;
  private reloading?: Promise<void>;
  /** Each gift card's snapshot id, computed once per catalog load (a digest of its content). */
  private snapshots = new WeakMap<GiftCard, string>();

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'CATALOG_REFRESH_INTERVAL_MS' | 'PARTNER_DISCOUNT_UNIT'>,
    private readonly stored: CatalogRepository,
    private readonly source: CatalogSource,
    private readonly changes: CatalogChangesRepository,
  ) {}

  /**
   * At start the API waits for its catalog (Postgres, else the partner, bounded by the read's deadline): the
   * processes start together, and an order right after start should not be told to come back.
   */
  async onApplicationBootstrap(): Promise<void> {
    await this.reload().catch((error: Error) => this.log.warn({ err: error.message }, 'could not read the stored catalog'));
    if (this.cards.size === 0) await this.refresh();
  }

  /** What the catalog says of `code` now, without waiting on the partner. */
  async find(code: string): Promise<CatalogAnswer> {
    this.reloadIfOld();
    let hit = this.cards.get(code);
    if (hit) return { kind: 'found', giftCard: hit };
    // A miss on a copy due for its re-read: the stored catalog may be newer (Postgres only, never the partner).
    if (this.reloading) {
      await this.reloading;
      hit = this.cards.get(code);
      if (hit) return { kind: 'found', giftCard: hit };
    }
    this.refreshSoon();
    if (!this.readable()) return { kind: 'unavailable' };
    return { kind: 'unknown', withdrawnAt: await this.changes.withdrawnAt(code) };
  }

  /** When a face value change recorded by the feed withdrew `amount` of the gift card (null: none did). */
  amountWithdrawnAt(code: string, amount: number): Promise<Date | null> {
    return this.changes.amountWithdrawnAt(code, amount);
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

  /** The whole catalog; null when none could be read yet (a read of the partner is started). */
  list(): { cards: GiftCard[]; refreshedAt: Date | null } | null {
    this.reloadIfOld();
    if (this.cards.size === 0) {
      this.refreshSoon();
      return null;
    }
    return { cards: [...this.cards.values()], refreshedAt: this.refreshedAt };
  }

  /** Reads the partner's catalog now (stored in Postgres with its changes, and used here); false when the partner did not give it. */
  async refresh(): Promise<boolean> {
    const cards = await this.source.refresh();
    if (!cards) {
      this.readFailedAt = Date.now();
      return false;
    }
    this.readFailedAt = 0;
    this.use(cards, new Date());
    return true;
  }

  /** Whether the copy in memory can vouch that a code it lacks does not exist. */
  private readable(): boolean {
    if (this.cards.size === 0 || !this.refreshedAt) return false;
    const stored = this.refreshedAt.getTime();
    if (this.readFailedAt > stored) return false;
    return Date.now() - stored <= STALE_AFTER_INTERVALS * this.config.CATALOG_REFRESH_INTERVAL_MS;
  }

  /** A read of the partner in the background, at most once per MISS_REFRESH_MIN_INTERVAL_MS; the request goes on. */
  private refreshSoon(): void {
    if (Date.now() - this.lastMissRefresh < MISS_REFRESH_MIN_INTERVAL_MS) return;
    this.lastMissRefresh = Date.now();
    void this.refresh().catch((error: Error) => this.log.warn({ err: error.message }, 'catalog read after a miss failed'));
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

/** 503 catalog_unavailable: the catalog could not be read, so a code (or the list) cannot be answered; a read is under way. */
export function catalogUnavailable(code?: string): ApiError {
  const what = code === undefined ? 'so it cannot be listed' : `so gift card ${code} could not be checked`;
  return new ApiError(503, 'catalog_unavailable', `The partner's catalog could not be read, ${what}; nothing was done: try again in ${CATALOG_RETRY_AFTER_S} s`, CATALOG_RETRY_AFTER_S);
}

/** What the catalog routes answer for a code the catalog lacks (orders refuse a withdrawn one with a 422 of their own). */
export function giftCardNotFound(code: string, answer: Exclude<CatalogAnswer, { kind: 'found' }>): ApiError {
  if (answer.kind === 'unavailable') return catalogUnavailable(code);
  const when = answer.withdrawnAt ? `: it was withdrawn from the partner's catalog at ${answer.withdrawnAt.toISOString()}` : '';
  return new ApiError(404, 'gift_card_not_found', `Gift card ${code} not found${when}`);
}
