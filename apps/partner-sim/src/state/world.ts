import { randomInt, randomUUID } from 'node:crypto';
import { costOf, discountInForce, discountPpm, type Card, type GiftCard } from '@cardpull/partner-client';
import type { SimAnswer } from '../common/answer';
import { isoWithOffset } from '../common/time';
import { seedCatalog } from '../catalog/seed';
import { Ledger } from '../ledger/ledger';

/** Stock of one gift card: unlimited, or an owned quantity per facial value (minor units). */
export type Stock = { unlimited: true } | { unlimited: false; quantities: Map<number, number> };

/** A sync pull per X-RequestId: running, or finished with the answer every repeat gets. */
export type SyncPull = { state: 'in_progress' } | { state: 'done'; answer: SimAnswer };

export interface PullRequestRecord {
  id: string;
  status: 'waiting' | 'processing' | 'success' | 'error';
  request_id: string;
  amount_cents: number;
  gift_card_code: string;
  created_at: string;
  updated_at: string;
  card: Card | null;
  /** When the partner first answered 422 "already used" for its request ID (ms; the read_lag reading's lag_from). */
  already_used_at: number | null;
}

const DAY_MS = 86_400_000;
const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * Everything the partner knows, in memory. /_sim/reset replaces the whole object; work still running
 * (timers of pulls begun before the reset) keeps its reference to the old one and cannot leak into the new.
 *
 * Money: amounts are integers in minor units (cents), the Balance resource is a decimal in currency units
 * (not shown by the spec; our choice). The balance is kept in cents so repeated draws stay exact; a card of
 * `amount` draws its cost: the face value less the gift card's discount in force (a percentage; its scheduled
 * discounts decide), with the same integer rounding as cardpull's ledger.
 */
export class SimWorld {
  readonly giftCards = new Map<string, GiftCard>();
  readonly stocks = new Map<string, Stock>();
  readonly cards = new Map<string, Card>();
  readonly syncPulls = new Map<string, SyncPull>();
  readonly pullRequests = new Map<string, PullRequestRecord>();
  readonly ledger = new Ledger();
  balanceCents: number;
  /** The request IDs of the last two pull requests created, newest last (the other_request_id reading). */
  private readonly latestPullRequestIds: string[] = [];

  constructor(mode: 'staging' | 'production', initialBalance: number) {
    for (const { giftCard, stock } of seedCatalog(mode)) {
      this.giftCards.set(giftCard.code, giftCard);
      this.stocks.set(
        giftCard.code,
        stock === 'unlimited'
          ? { unlimited: true }
          : { unlimited: false, quantities: new Map(Object.entries(stock).map(([fv, q]) => [Number(fv), q])) },
      );
    }
    this.balanceCents = toCents(initialBalance);
  }

  /** Adds a pull request created now. */
  addPullRequest(record: PullRequestRecord): void {
    this.pullRequests.set(record.request_id, record);
    this.latestPullRequestIds.push(record.request_id);
    if (this.latestPullRequestIds.length > 2) this.latestPullRequestIds.shift();
  }

  /** The latest pull request created whose request ID is not `requestId`, if any. */
  latestPullRequestOtherThan(requestId: string): PullRequestRecord | undefined {
    const id = [...this.latestPullRequestIds].reverse().find((r) => r !== requestId);
    return id === undefined ? undefined : this.pullRequests.get(id);
  }

  /** The Balance resource's amount: a decimal in currency units. */
  get balance(): number {
    return this.balanceCents / 100;
  }

  set balance(amount: number) {
    this.balanceCents = toCents(amount);
  }

  /** What a card of `amount` of this gift card draws from the balance now, in cents. */
  costOf(code: string, amount: number): number {
    const giftCard = this.giftCards.get(code);
    return giftCard ? costOf(amount, discountPpm(discountInForce(giftCard, new Date()), 'percent')) : amount;
  }

  inStock(code: string, amount: number): boolean {
    const stock = this.stocks.get(code);
    return !!stock && (stock.unlimited || (stock.quantities.get(amount) ?? 0) > 0);
  }

  /** Takes one card of `amount` out of stock and draws its cost from the balance (checked by the caller); answers the cost drawn. */
  reserve(code: string, amount: number): number {
    const stock = this.stocks.get(code);
    if (stock && !stock.unlimited) stock.quantities.set(amount, (stock.quantities.get(amount) ?? 0) - 1);
    const cost = this.costOf(code, amount);
    this.balanceCents -= cost;
    return cost;
  }

  /** Undoes `reserve` (an async pull that ended in error): gives back the `cost` it drew. */
  release(code: string, amount: number, cost: number): void {
    const stock = this.stocks.get(code);
    if (stock && !stock.unlimited) stock.quantities.set(amount, (stock.quantities.get(amount) ?? 0) + 1);
    this.balanceCents += cost;
  }

  /** Creates a card (stock and balance already reserved) and records it in the ledger. */
  issueCard(giftCard: GiftCard, amount: number, requestId: string, via: 'sync' | 'async', publicBase: string): Card {
    const now = Date.now();
    const id = randomUUID();
    const card: Card = {
      id,
      code: Array.from({ length: 16 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join(''),
      // validity_period's unit is not shown by the spec: read as days.
      expire_at: isoWithOffset(now + giftCard.validity_period * DAY_MS),
      // The spec types pin_code as a string; a gift card without PIN (code_pin false) gets null.
      pin_code: giftCard.code_pin ? String(randomInt(1_000_000)).padStart(6, '0') : null,
      amount,
      gift_card_code: giftCard.code,
      pdf_url: `${publicBase}/cards/${id}.pdf`,
    };
    this.cards.set(id, card);
    this.ledger.recordCard({
      id,
      code: card.code,
      pin_code: card.pin_code ?? null,
      amount,
      gift_card_code: giftCard.code,
      request_id: requestId,
      via,
      issued_at: isoWithOffset(now),
    });
    return card;
  }
}

export function toCents(amount: number): number {
  return Math.round(amount * 100);
}
