import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, isPlainPassword, type ServiceConfig } from '@cardpull/config';
import {
  BalanceSamplesRepository,
  CatalogChangesRepository,
  type CatalogChangeRow,
  LedgerBook,
  LedgerRepository,
  ORDER_STATUSES,
  OperationsRepository,
  type BalanceSampleRow,
  type LedgerAccount,
  type WindowOrder,
  PartnerErrors,
  type AttentionRow,
  type ExtraCardCounts,
  type ExtraCardRow,
  type FailureGroup,
  type MoneyInDoubt,
  type OrderSummary,
  type PartnerErrorGroups,
  type PartnerErrorRow,
} from '@cardpull/orders';
import { OVERVIEW_GROUPS, PartnerPanel, type PartnerPanelModel } from './partner-panel.service';

export { OVERVIEW_GROUPS };

/** How many needs_attention orders the page lists (the count above it is exact). */
export const ATTENTION_LIMIT = 100;
/** How many surplus and mismatched cards the page lists (the counts above them are exact). */
export const EXTRA_CARDS_LIMIT = 50;
const RECENT_LIMIT = 15;
/** /admin/errors: every cause and kind (bounded all the same), and the latest partner errors one by one. */
const ALL_GROUPS = 500;
const LATEST_ERRORS = 100;

export type { AttentionRow, ExtraCardRow, OrderSummary };

export interface OperationsModel {
  counts: { status: string; count: number }[];
  total: number;
  attention: AttentionRow[];
  /** Cards to recover, newest first (at most EXTRA_CARDS_LIMIT), and how many there are of each role. */
  extraCards: ExtraCardRow[];
  extraCardCounts: ExtraCardCounts;
  recent: OrderSummary[];
  /** Orders waiting on a request ID of unknown outcome, by status. */
  inDoubt: MoneyInDoubt[];
  /** Failed and needs_attention orders grouped by cause, latest cause first (at most OVERVIEW_GROUPS), and how many causes in all. */
  failures: FailureGroup[];
  failureCauses: number;
  partner: PartnerPanelModel;
  /** Each client with a spend limit (SPEND_LIMITS): what it ordered today (UTC) against its limits. */
  spend: { client: string; today: number; perDay: number | null; maxOrder: number | null }[];
  /** The ledger (issue 24): its book, the units assumed, every account's balance, the latest drift sample. */
  money: MoneyModel;
  /** ADMIN_USERS still has a plain-text password (fine locally; refused with PARTNER_ENV=production). */
  plainPasswords: boolean;
  /** The partner's latest catalog changes (issue 25; all recent ones on /admin/catalog-changes). */
  catalogChanges: CatalogChangeRow[];
}

/** How many catalog changes the overview shows. */
export const OVERVIEW_CATALOG_CHANGES = 5;

export interface MoneyModel {
  book: { partnerAccount: string; currency: string };
  /** The readings of the spec's silent money points in force (settings). */
  units: { discount: string; balance: string };
  balances: { account: LedgerAccount; balance: number }[];
  drift: BalanceSampleRow | null;
  /** While drifting: the orders that moved money in the drift's window, latest first. */
  driftOrders: WindowOrder[];
}

/** How many orders a drift's warning lists. */
export const DRIFT_ORDERS_LIMIT = 50;

/** /admin/errors: every cause of failure and kind of partner error, and the latest partner errors. */
export interface ErrorsModel {
  failures: FailureGroup[];
  failureCauses: number;
  partnerErrors: PartnerErrorGroups;
  latest: PartnerErrorRow[];
}

/** The operations page's view model: order counts, the needs_attention queue, recent orders, the partner panel. */
@Injectable()
export class OperationsService {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'ADMIN_USERS' | 'SPEND_LIMITS' | 'PARTNER_DISCOUNT_UNIT' | 'PARTNER_BALANCE_UNIT'>,
    private readonly reads: OperationsRepository,
    private readonly ledger: LedgerRepository,
    private readonly book: LedgerBook,
    private readonly samples: BalanceSamplesRepository,
    private readonly partnerPanel: PartnerPanel,
    private readonly partnerErrors: PartnerErrors,
    private readonly catalogChanges: CatalogChangesRepository,
  ) {}

  async overview(): Promise<OperationsModel> {
    const [counts, attention, extra, recent, failures, partner, spent, inDoubt, money, catalogChanges] = await Promise.all([
      this.counts(),
      this.attention(),
      this.extraCards(),
      this.recent(),
      this.reads.failureGroups(OVERVIEW_GROUPS),
      this.partnerPanel.build(),
      this.config.SPEND_LIMITS.size ? this.reads.spendToday([...this.config.SPEND_LIMITS.keys()]) : Promise.resolve(new Map<string, number>()),
      this.reads.moneyInDoubt(),
      this.money(),
      this.catalogChanges.latest(OVERVIEW_CATALOG_CHANGES),
    ]);
    return {
      counts,
      total: counts.reduce((sum, c) => sum + c.count, 0),
      attention,
      extraCards: extra.rows,
      extraCardCounts: extra.counts,
      recent,
      failures: failures.groups,
      failureCauses: failures.causes,
      inDoubt,
      partner,
      spend: [...this.config.SPEND_LIMITS].map(([client, l]) => ({ client, today: spent.get(client) ?? 0, perDay: l.perDay, maxOrder: l.maxOrder })),
      plainPasswords: this.config.ADMIN_USERS.some(isPlainPassword),
      money,
      catalogChanges,
    };
  }

  async money(): Promise<MoneyModel> {
    const [book, totals, drift] = await Promise.all([this.book.current(), this.ledger.totals(), this.samples.latest()]);
    const driftOrders = drift?.state === 'drift' && drift.windowFrom ? await this.samples.ordersSince(drift.windowFrom, DRIFT_ORDERS_LIMIT) : [];
    return {
      book,
      units: {
        discount: this.config.PARTNER_DISCOUNT_UNIT === 'percent' ? 'percent: a discount of 3.5 is 3.5 % off the face value' : 'fraction: a discount of 0.035 is 3.5 % off the face value',
        balance: this.config.PARTNER_BALANCE_UNIT === 'major' ? 'major: the balance is a decimal in currency units (25.00)' : 'minor: the balance is an integer in minor units (2500)',
      },
      balances: totals.filter((t) => t.partnerAccount === book.partnerAccount && t.currency === book.currency).map((t) => ({ account: t.account, balance: t.balance })),
      drift,
      driftOrders,
    };
  }

  async errors(): Promise<ErrorsModel> {
    const [failures, partnerErrors, latest] = await Promise.all([
      this.reads.failureGroups(ALL_GROUPS),
      this.partnerErrors.groups(ALL_GROUPS),
      this.partnerErrors.recent(LATEST_ERRORS),
    ]);
    return { failures: failures.groups, failureCauses: failures.causes, partnerErrors, latest };
  }

  private async counts(): Promise<OperationsModel['counts']> {
    const by = new Map((await this.reads.statusCounts()).map((r) => [r.status, r.count]));
    return ORDER_STATUSES.map((status) => ({ status, count: by.get(status) ?? 0 }));
  }

  private attention(): Promise<AttentionRow[]> {
    return this.reads.needsAttention(ATTENTION_LIMIT);
  }

  /** Surplus and mismatched cards: never their code, PIN or PDF link. */
  private async extraCards(): Promise<{ rows: ExtraCardRow[]; counts: ExtraCardCounts }> {
    const [rows, counts] = await Promise.all([this.reads.extraCards(EXTRA_CARDS_LIMIT), this.reads.extraCardCounts()]);
    return { rows, counts };
  }

  private recent(): Promise<OrderSummary[]> {
    return this.reads.recent(RECENT_LIMIT);
  }
}
