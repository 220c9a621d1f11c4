import { Injectable } from '@nestjs/common';
import { BalanceSamplesRepository, CallbackQueue, CallbacksRepository, CatalogRepository, LedgerBook, LedgerRepository, PartnerSnapshots, type BalanceSampleRow } from '@cardpull/orders';
import { PricingRefused, balanceMinor, costOf, discountInForce, discountPpm, type GiftCard } from '@cardpull/partner-client';
import { PeriodicTask } from '../tasks/periodic-task';
import { nextRunwayState, runwayHours, smoothedRate, type RunwayState } from './runway';

/**
 * Balance drift (issue 24, item 3), once per BALANCE_DRIFT_INTERVAL_MS across the fleet: reads the
 * partner's balance (a fresh read, never the cache) and compares it with what the ledger says the partner
 * holds: float + reserved + in_doubt, the money not known to be spent. The two move together: a card stored
 * at its cost leaves both, a top-up an operator records enters both. So their gap is what the ledger cannot
 * explain, cumulatively: a drift that the ledger explains later (a card drawn by the partner and stored after
 * the sample) clears itself at the next sample.
 *
 *  - The first sample sets the ledger's float to the partner's balance (an `opening_balance` movement from
 *    `adjustments`, actor `worker:balance-drift`), so the gap starts at 0.
 *  - gap = partner - ledger. The partner may have drawn the cost of live orders whose request ID was sent
 *    before we stored their card (`inFlight`), so a gap down to -inFlight is explained. Beyond it by more
 *    than the smallest card's cost (`tolerance`, from the catalog): a drift (negative: drawn without a card
 *    we know; positive: credited without a top-up we know).
 *  - Each sample is a row of balance_samples (the alert's audit trail, with the drift's window: since the
 *    last sample that was ok); a change of state is logged (`balance_drift` / `balance_drift_cleared`). The
 *    metric `cardpull_balance_drift` and the operations page read the latest sample.
 */
@Injectable()
export class BalanceDrift extends PeriodicTask<BalanceSampleRow | null> {
  protected readonly taskName = 'balance drift check';
  protected readonly every = 'BALANCE_DRIFT_INTERVAL_MS';
  /** At start: the ledger is opened at once, and the metric has a value from the first scrape. */
  protected override readonly runAtStart = true;

  constructor(
    private readonly snapshots: PartnerSnapshots,
    private readonly samples: BalanceSamplesRepository,
    private readonly ledger: LedgerRepository,
    private readonly book: LedgerBook,
    private readonly catalog: CatalogRepository,
    private readonly callbacks: CallbacksRepository,
    private readonly callbackQueue: CallbackQueue,
  ) {
    super();
  }

  protected tick(): Promise<BalanceSampleRow | null> {
    return this.sample();
  }

  /** One sample (null when the partner gave no fresh balance or its unit cannot be read: nothing is concluded). */
  async sample(): Promise<BalanceSampleRow | null> {
    const book = await this.book.current();
    const before = await this.samples.partnerSide(book.partnerAccount);
    const reading = await this.snapshots.balance(0);
    if (!reading || reading.stale) {
      this.log.warn('balance drift: no fresh balance from the partner; no sample this time');
      return null;
    }
    let partnerBalance: number;
    try {
      partnerBalance = balanceMinor(reading.data.balance.amount, this.config.PARTNER_BALANCE_UNIT);
    } catch (error) {
      if (!(error instanceof PricingRefused)) throw error;
      this.log.error({ setting: error.setting, err: error.message }, `balance drift: ${error.message}; no sample`);
      return null;
    }
    const after = await this.samples.partnerSide(book.partnerAccount);
    const tolerance = await this.tolerance();
    const previous = await this.samples.latest();
    if (!after.opened) {
      const opening = partnerBalance - after.ledgerBalance;
      if (opening !== 0) {
        await this.ledger.operatorMovement({
          kind: 'opening_balance', amount: opening, actor: 'worker:balance-drift', partnerAccount: book.partnerAccount, currency: book.currency,
          reason: `the ledger's float set to the partner's balance at the first drift sample (${partnerBalance} minor units)`,
        });
      }
      return this.samples.record({ partnerBalance, ledgerBalance: after.ledgerBalance + opening, inFlight: after.inFlight, tolerance, drift: 0, state: 'opening', ...(await this.runway(book.partnerAccount, after.float + opening, previous)) });
    }
    const runway = await this.runway(book.partnerAccount, after.float, previous);
    // The ledger moved between the two reads around the partner's: each bound is the one that explains more.
    const gap = partnerBalance - after.ledgerBalance;
    const inFlight = Math.max(before.inFlight, after.inFlight) + Math.abs(after.ledgerBalance - before.ledgerBalance);
    const drift = gap < -(inFlight + tolerance) ? gap + inFlight : gap > tolerance ? gap : 0;
    const row = await this.samples.record({ partnerBalance, ledgerBalance: after.ledgerBalance, inFlight, tolerance, drift, state: drift === 0 ? 'ok' : 'drift', ...runway });
    if (row.state === 'drift' && previous?.state !== 'drift') {
      this.log.warn(
        { alert: 'balance_drift', drift, partnerBalance, ledgerBalance: after.ledgerBalance, inFlight, tolerance, since: row.windowFrom },
        `ALERT: the partner's balance is ${partnerBalance} where the ledger explains ${after.ledgerBalance} (less up to ${inFlight} in flight): ${drift} ${book.currency} minor units unexplained; see the operations page for the orders of the window`,
      );
    } else if (row.state === 'ok' && previous?.state === 'drift') {
      this.log.log({ alert: 'balance_drift_cleared', partnerBalance, ledgerBalance: after.ledgerBalance }, 'the partner balance agrees with the ledger again');
    }
    await this.announceRunway(previous?.runwayState ?? 'ok', row, after.float, book);
    return row;
  }

  /** The spend rate (the last RUNWAY_WINDOW_MS, smoothed across samples), the runway it leaves the float, and its state. */
  private async runway(partnerAccount: string, float: number, previous: BalanceSampleRow | null): Promise<Pick<BalanceSampleRow, 'spendPerMinute' | 'runwayHours' | 'runwayState'>> {
    const windowMs = this.config.RUNWAY_WINDOW_MS;
    const newest = (await this.samples.spentWithin(partnerAccount, windowMs)) / (windowMs / 60_000);
    const spendPerMinute = smoothedRate(previous ? previous.spendPerMinute : null, newest);
    const hours = runwayHours(float, spendPerMinute);
    const runwayState = nextRunwayState(previous?.runwayState ?? 'ok', hours, { approachingHours: this.config.RUNWAY_APPROACHING_HOURS, belowHours: this.config.RUNWAY_BELOW_HOURS });
    return { spendPerMinute, runwayHours: hours, runwayState };
  }

  /**
   * A change of the runway's state, logged once: approaching, below, recovered. A worse state also sends a
   * signed `balance.low` callback to each client of BALANCE_LOW_CALLBACK_CLIENTS (the callbacks' outbox:
   * retried like an order's, listed with its deliveries).
   */
  private async announceRunway(previous: RunwayState, row: BalanceSampleRow, float: number, book: { partnerAccount: string; currency: string }): Promise<void> {
    if (row.runwayState === previous) return;
    const currency = book.currency;
    const hours = row.runwayHours === null ? 'endless' : `${row.runwayHours.toFixed(1)} h`;
    const fields = { runwayHours: row.runwayHours, spendPerMinute: Math.round(row.spendPerMinute), currency, was: previous };
    if (row.runwayState === 'ok') {
      this.log.log({ alert: 'runway_recovered', ...fields }, `runway recovered: the float lasts ${hours} at the recent spend`);
      return;
    }
    this.log.warn({ alert: `runway_${row.runwayState}`, ...fields }, `ALERT: runway ${row.runwayState}: the float lasts ${hours} at ${Math.round(row.spendPerMinute)} ${currency} minor units a minute; top it up`);
    const worse = previous === 'ok' || row.runwayState === 'below';
    const to = this.config.BALANCE_LOW_CALLBACK_CLIENTS.map((client) => ({ client, url: this.config.CALLBACK_URLS.get(client)! })).filter((t) => t.url);
    if (!worse || !to.length) return;
    const ids = await this.callbacks.addAccountEvents(
      'balance.low',
      {
        state: row.runwayState,
        runway_hours: row.runwayHours,
        spend_per_minute: Math.round(row.spendPerMinute),
        float: float,
        currency,
        partner_account: book.partnerAccount,
        thresholds_hours: { approaching: this.config.RUNWAY_APPROACHING_HOURS, below: this.config.RUNWAY_BELOW_HOURS },
      },
      to,
    );
    await this.callbackQueue.enqueue(ids.map((id) => ({ id })));
  }

  /** The smallest card's cost in the stored catalog (1 when no card can be priced). */
  private async tolerance(): Promise<number> {
    const { cards } = await this.catalog.all();
    const costs = cards.flatMap((card) => {
      try {
        return [costOf(smallestFace(card), discountPpm(discountInForce(card, new Date()), this.config.PARTNER_DISCOUNT_UNIT))];
      } catch {
        return [];
      }
    });
    return costs.length ? Math.max(1, Math.min(...costs)) : 1;
  }
}

const smallestFace = (card: GiftCard): number => (card.facial_values.type === 'fixed' ? Math.min(...card.facial_values.amounts) : card.facial_values.min_amount);
