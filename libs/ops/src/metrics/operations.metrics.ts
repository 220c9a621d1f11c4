import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import type { JobType } from 'bullmq';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { BalanceSamplesRepository, CallbackQueue, LedgerRepository, ORDER_STATUSES, OperationsRepository, OrderQueue, type BalanceSampleRow, type MoneyInDoubt } from '@cardpull/orders';
import { PartnerStatus } from '../partner-status/partner-status.service';
import { METRIC_PREFIX, METRICS_REGISTRY, withTimeout } from '@cardpull/platform';

/** Scrapes within this window share one read of Postgres and Redis. */
export const OPERATIONS_CACHE_MS = 5_000;
/**
 * The ledger's totals are a sum over every entry (no running balance: that would be one row every order's
 * transaction updates): read at most once a minute per process.
 */
export const LEDGER_TOTALS_CACHE_MS = 60_000;
const SOURCE_TIMEOUT_MS = 2_000;

/** Statuses that are neither terminal nor parked for an operator: they have a scheduled next step. */
const NOT_OPEN = new Set(['completed', 'failed', 'needs_attention']);
const QUEUE_STATES: JobType[] = ['waiting', 'active', 'delayed', 'failed', 'prioritized'];

interface OperationsSnapshot {
  /** Count and oldest created_at per order status (null when Postgres did not answer). */
  orders: { status: string; count: number; oldest: Date }[] | null;
  /** Cards that are not their order's card, by role (null when Postgres did not answer). */
  extraCards: { surplus: number; mismatch: number } | null;
  /** Cards sealed with a key not in CARD_ENCRYPTION_KEYS (null when Postgres did not answer). */
  unreadableCards: number | null;
  circuitOpen: boolean | null;
  /** Orders waiting on a request ID of unknown outcome, by status (null when Postgres did not answer). */
  inDoubt: MoneyInDoubt[] | null;
  queues: { queue: string; counts: Record<string, number>; paused: boolean }[];
  /** Every ledger account's balance (null when Postgres did not answer). */
  ledger: { partnerAccount: string; account: string; currency: string; balance: number }[] | null;
  /** The balance drift check's latest sample (null: none yet, or Postgres did not answer). */
  drift: BalanceSampleRow | null;
}

/**
 * Gauges computed at scrape time from the truth: orders by status, the needs_attention count and the age
 * of the oldest open order (Postgres, one GROUP BY), the cards that are not their order's (surplus,
 * mismatch; one indexed count), the circuit (Postgres), the queue depths (BullMQ
 * getJobCounts) and the partner balance (the cached probe of PartnerStatus). Postgres and Redis are read
 * at most once per OPERATIONS_CACHE_MS however often Prometheus scrapes. A value that is not known (a
 * source that did not answer, no balance yet) is left out of the scrape, never reported as 0 (alert on
 * absent()), and never fails the scrape.
 *
 * These values describe the whole deployment, not this process: the API and every worker export the
 * same numbers, so aggregate them with max(), not sum().
 */
@Injectable()
export class OperationsMetrics implements OnModuleInit {
  private readonly log = new Logger(OperationsMetrics.name);
  private cached?: { at: number; value: Promise<OperationsSnapshot> };
  private ledgerCached?: { at: number; value: Promise<OperationsSnapshot['ledger']> };
  private lastWarnAt = 0;

  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'CARD_ENCRYPTION_KEYS' | 'LOW_BALANCE_THRESHOLD'>,
    private readonly reads: OperationsRepository,
    private readonly orderQueue: OrderQueue,
    private readonly callbackQueue: CallbackQueue,
    private readonly partner: PartnerStatus,
    private readonly ledger: LedgerRepository,
    private readonly samples: BalanceSamplesRepository,
  ) {}

  // Each collect reads first and only then clears and sets, with no await in between: two concurrent
  // scrapes never see each other's half-filled gauge.
  onModuleInit(): void {
    const registers = [this.registry];
    const snapshot = () => this.snapshot();
    new Gauge({
      name: `${METRIC_PREFIX}orders`,
      help: 'Orders by status (all of them, from Postgres)',
      labelNames: ['status'],
      registers,
      async collect() {
        const { orders } = await snapshot();
        this.reset();
        if (!orders) return;
        for (const status of ORDER_STATUSES) this.set({ status }, orders.find((o) => o.status === status)?.count ?? 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}orders_needs_attention`,
      help: 'Orders in needs_attention: parked until an operator acts (the operations page lists them with the reason)',
      registers,
      async collect() {
        const { orders } = await snapshot();
        this.remove();
        if (orders) this.set(orders.find((o) => o.status === 'needs_attention')?.count ?? 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}oldest_open_order_age_seconds`,
      help: 'Age of the oldest order that is not completed, failed or needs_attention (0 when there is none)',
      registers,
      async collect() {
        const { orders } = await snapshot();
        this.remove();
        if (!orders) return;
        const open = orders.filter((o) => !NOT_OPEN.has(o.status)).map((o) => o.oldest.getTime());
        this.set(open.length ? Math.max(0, (Date.now() - Math.min(...open)) / 1000) : 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}extra_cards`,
      help:
        "Cards the partner issued (and billed) that are not their order's card: surplus (a second card for an order) and mismatch " +
        '(a card that differs from its order). Each is kept and listed on the operations page; any non-zero value is money to recover',
      labelNames: ['role'],
      registers,
      async collect() {
        const { extraCards } = await snapshot();
        this.reset();
        if (!extraCards) return;
        this.set({ role: 'surplus' }, extraCards.surplus);
        this.set({ role: 'mismatch' }, extraCards.mismatch);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}cards_unreadable`,
      help: 'Cards sealed with a key that is no longer in CARD_ENCRYPTION_KEYS: their orders answer "unreadable". Put the key back (after the new one) and run npm run vault:reencrypt',
      registers,
      async collect() {
        const { unreadableCards } = await snapshot();
        this.reset();
        if (unreadableCards !== null) this.set(unreadableCards);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}queue_jobs`,
      help: 'BullMQ jobs by queue (orders, callbacks) and state (waiting, active, delayed, failed, prioritized). Redis only triggers: Postgres holds the orders',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        const { queues } = await snapshot();
        this.reset();
        for (const { queue, counts } of queues) {
          for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
        }
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}queue_paused`,
      help: '1 while the queue is paused (the orders queue pauses while the partner circuit is open), else 0',
      labelNames: ['queue'],
      registers,
      async collect() {
        const { queues } = await snapshot();
        this.reset();
        for (const { queue, paused } of queues) this.set({ queue }, paused ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}partner_circuit_open`,
      help: '1 while the partner circuit is open (the partner refuses our credentials; partner calls are paused, orders wait), else 0',
      registers,
      async collect() {
        const { circuitOpen } = await snapshot();
        this.remove();
        if (circuitOpen !== null) this.set(circuitOpen ? 1 : 0);
      },
    });
    this.inDoubtGauges(registers, snapshot);
    this.balanceGauges(registers);
    this.moneyGauges(registers, snapshot);
  }

  /** Money (issue 24): the ledger's accounts, and the balance drift check's latest sample. */
  private moneyGauges(registers: Registry[], snapshot: () => Promise<OperationsSnapshot>): void {
    new Gauge({
      name: `${METRIC_PREFIX}ledger_balance`,
      help: 'Ledger balance per account (float, reserved, in_doubt, spent, surplus, adjustments), partner account and currency, in minor units',
      labelNames: ['account', 'partner_account', 'currency'],
      registers,
      async collect() {
        const { ledger } = await snapshot();
        this.reset();
        for (const l of ledger ?? []) this.set({ account: l.account, partner_account: l.partnerAccount, currency: l.currency }, l.balance);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}balance_drift`,
      help: "The partner balance's gap the ledger cannot explain, in minor units, at the latest drift sample (negative: drawn without a card we know; 0: none)",
      registers,
      async collect() {
        const { drift } = await snapshot();
        this.remove();
        if (drift) this.set(drift.drift);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}runway_hours`,
      help: 'Hours the ledger float lasts at the recent spend rate, at the latest drift sample (+Inf while nothing is spent)',
      registers,
      async collect() {
        const { drift } = await snapshot();
        this.remove();
        if (drift) this.set(drift.runwayHours ?? Number.POSITIVE_INFINITY);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}runway_state`,
      help: 'The runway alert: 0 ok, 1 approaching (below RUNWAY_APPROACHING_HOURS), 2 below (RUNWAY_BELOW_HOURS); each left only a quarter above its threshold',
      registers,
      async collect() {
        const { drift } = await snapshot();
        this.remove();
        if (drift) this.set({ ok: 0, approaching: 1, below: 2 }[drift.runwayState]);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}spend_per_minute`,
      help: 'What cards cost per minute lately (spent and surplus, smoothed), minor units',
      registers,
      async collect() {
        const { drift } = await snapshot();
        this.remove();
        if (drift) this.set(drift.spendPerMinute);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}balance_drift_sample_age_seconds`,
      help: 'Age of the latest balance drift sample (grows while the partner balance cannot be read)',
      registers,
      async collect() {
        const { drift } = await snapshot();
        this.remove();
        if (drift) this.set(Math.max(0, (Date.now() - drift.at.getTime()) / 1000));
      },
    });
  }

  /** Money in doubt: orders waiting on a request ID that may or may not have been billed (invariant 2: never replaced unasked). */
  private inDoubtGauges(registers: Registry[], snapshot: () => Promise<OperationsSnapshot>): void {
    const each = (name: string, help: string, value: (rows: MoneyInDoubt[], status: string) => number) =>
      new Gauge({
        name: `${METRIC_PREFIX}${name}`,
        help,
        labelNames: ['status'],
        registers,
        async collect() {
          const { inDoubt } = await snapshot();
          this.reset();
          if (!inDoubt) return;
          for (const status of ['in_progress', 'needs_attention']) this.set({ status }, value(inDoubt, status));
        },
      });
    const of = (rows: MoneyInDoubt[], status: string) => rows.find((r) => r.status === status);
    each('money_in_doubt_orders', 'Orders waiting on a request ID of unknown outcome (it may have been billed), by status: in_progress within the unknown-outcome window, needs_attention past it', (rows, s) => of(rows, s)?.orders ?? 0);
    each('money_in_doubt_amount', 'Face value of those orders, in minor units', (rows, s) => of(rows, s)?.amount ?? 0);
    each('money_in_doubt_oldest_seconds', 'How long the oldest of those orders has waited on its request ID (0 when none)', (rows, s) => {
      const row = of(rows, s);
      return row ? Math.max(0, (Date.now() - new Date(row.oldest).getTime()) / 1000) : 0;
    });
  }

  private balanceGauges(registers: Registry[]): void {
    const partner = this.partner;
    const threshold = this.config.LOW_BALANCE_THRESHOLD;
    new Gauge({
      name: `${METRIC_PREFIX}partner_balance`,
      help: 'Partner account balance in currency units, from the cached balance (PARTNER_CACHE_TTL_MS)',
      registers,
      async collect() {
        const snap = (await partner.balance())?.snapshot;
        this.remove();
        if (snap) this.set(snap.data.balance.amount);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}partner_balance_age_seconds`,
      help: 'Age of the balance behind cardpull_partner_balance (grows while the partner cannot be asked)',
      registers,
      async collect() {
        const snap = (await partner.balance())?.snapshot;
        this.remove();
        if (snap) this.set(Math.max(0, (Date.now() - snap.fetchedAt.getTime()) / 1000));
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}partner_balance_low`,
      help: '1 when the partner balance is below LOW_BALANCE_THRESHOLD, else 0',
      registers,
      async collect() {
        const low = partner.isLow(await partner.balance());
        this.remove();
        if (low !== null) this.set(low ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}partner_balance_low_threshold`,
      help: 'LOW_BALANCE_THRESHOLD, in currency units',
      registers,
      collect() {
        this.set(threshold);
      },
    });
  }

  private snapshot(): Promise<OperationsSnapshot> {
    if (!this.cached || Date.now() - this.cached.at >= OPERATIONS_CACHE_MS) {
      this.cached = { at: Date.now(), value: this.read() };
    }
    return this.cached.value;
  }

  private async read(): Promise<OperationsSnapshot> {
    const [orders, extraCards, unreadableCards, circuit, inDoubt, queues, ledger, drift] = await Promise.all([
      this.source('orders', () =>
        this.reads.statusCounts(),
      ),
      this.source('cards', () =>
        this.reads.extraCardCounts(),
      ),
      this.source('card keys', () => this.reads.cardsWithoutKey(this.config.CARD_ENCRYPTION_KEYS.map((k) => k.id))),
      this.source('partner circuit', () => this.partner.circuitState()),
      this.source('money in doubt', () => this.reads.moneyInDoubt()),
      Promise.all(
        [
          { queue: 'orders', q: this.orderQueue },
          { queue: 'callbacks', q: this.callbackQueue },
        ].map(async ({ queue, q }) => {
          const read = await this.source(`${queue} queue`, () => q.counts(QUEUE_STATES));
          return read ? { queue, ...read } : null;
        }),
      ),
      this.ledgerTotals(),
      this.source('balance drift', () => this.samples.latest()),
    ]);
    return {
      orders,
      extraCards,
      unreadableCards,
      circuitOpen: circuit ? circuit.state === 'open' : null,
      inDoubt,
      queues: queues.filter((q): q is NonNullable<typeof q> => q !== null),
      ledger,
      drift,
    };
  }

  private ledgerTotals(): Promise<OperationsSnapshot['ledger']> {
    if (!this.ledgerCached || Date.now() - this.ledgerCached.at >= LEDGER_TOTALS_CACHE_MS) {
      const value = this.source('ledger', () => this.ledger.totals());
      this.ledgerCached = { at: Date.now(), value };
      // A read that failed is not kept for a minute: the next scrape tries again.
      void value.then((v) => v === null && this.ledgerCached?.value === value && (this.ledgerCached = undefined));
    }
    return this.ledgerCached.value;
  }

  /** One source of the snapshot, bounded in time; null (and one warning per minute) when it fails. */
  private async source<T>(what: string, read: () => Promise<T>): Promise<T | null> {
    try {
      return await withTimeout(read(), SOURCE_TIMEOUT_MS);
    } catch (error) {
      if (Date.now() - this.lastWarnAt > 60_000) {
        this.lastWarnAt = Date.now();
        this.log.warn({ err: (error as Error).message }, `metrics: could not read the ${what}; its gauges are left out of this scrape`);
      }
      return null;
    }
  }
}
