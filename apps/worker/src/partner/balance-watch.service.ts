import { Injectable } from '@nestjs/common';
import { PartnerStatus } from '@cardpull/ops';
import { PeriodicTask } from '../tasks/periodic-task';

/**
 * Low balance watch (worker): at start and every BALANCE_WATCH_INTERVAL_MS, reads the cached partner
 * balance (PartnerSnapshots through PartnerStatus, so never more than one partner call per
 * PARTNER_CACHE_TTL_MS). Below LOW_BALANCE_THRESHOLD it logs one warning per crossing (alert
 * `partner_balance_low`), and one info when the balance is back above it. Only a fresh balance moves the
 * state: an old copy kept while the partner is unreachable neither raises nor clears the alert. The
 * reading also feeds the `cardpull_partner_balance*` gauges of this process.
 */
@Injectable()
export class BalanceWatch extends PeriodicTask<boolean | null> {
  protected readonly taskName = 'balance watch check';
  protected readonly every = 'BALANCE_WATCH_INTERVAL_MS';
  protected override readonly runAtStart = true;
  private low = false;

  constructor(private readonly partner: PartnerStatus) {
    super();
  }

  protected tick(): Promise<boolean | null> {
    return this.check();
  }

  /** One check; returns whether the balance is below the threshold (null when no fresh balance is known). */
  async check(): Promise<boolean | null> {
    // Waits for the refresh itself: this is a background timer, not a probe that must answer quickly.
    const reading = await this.partner.balance(this.config.PARTNER_TIMEOUT_MS + 5_000);
    if (!reading?.snapshot || reading.snapshot.stale) return null;
    const amount = reading.snapshot.data.balance.amount;
    const threshold = this.config.LOW_BALANCE_THRESHOLD;
    const low = amount < threshold;
    if (low && !this.low) {
      this.log.warn(
        { alert: 'partner_balance_low', balance: amount, threshold },
        `ALERT: the partner balance (${amount}) is below LOW_BALANCE_THRESHOLD (${threshold}); top it up before pulls fail with not_enough_funds`,
      );
    } else if (!low && this.low) {
      this.log.log({ alert: 'partner_balance_recovered', balance: amount, threshold }, `the partner balance (${amount}) is back above LOW_BALANCE_THRESHOLD (${threshold})`);
    }
    this.low = low;
    return low;
  }
}
