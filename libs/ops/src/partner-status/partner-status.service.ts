import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { type CircuitState, PartnerCircuit, PartnerSnapshots, type Snapshot } from '@cardpull/orders';
import type { Balance } from '@cardpull/partner-client';
import { withTimeout } from '@cardpull/platform';

/** How long a probe or a scrape waits for a balance refresh before answering with what it already knows. */
export const PARTNER_READ_WAIT_MS = 1_500;

export interface BalanceReading {
  /** The balance as PartnerSnapshots gave it (possibly an older copy: `stale`), or null when nothing is known. */
  snapshot: Snapshot<Balance> | null;
  /** Why the last refresh did not get a fresh balance from the partner (null when it did). */
  failure: { outcome: string; message: string; at: Date } | null;
  /** When this process last asked PartnerSnapshots. */
  checkedAt: Date;
}

/**
 * The partner as the health probe, /metrics and the balance watch see it: the circuit state (Postgres) and
 * the CACHED balance (PartnerSnapshots.balance(), PARTNER_CACHE_TTL_MS).
 *
 * PartnerSnapshots only caches successes: while the partner is down every call would go to the partner
 * again (and wait up to PARTNER_TIMEOUT_MS). This class therefore asks PartnerSnapshots at most once per
 * PARTNER_CACHE_TTL_MS per process, whatever the outcome, and a reader waits at most PARTNER_READ_WAIT_MS
 * for that refresh before using the previous reading. So however often /health/ready or /metrics is called,
 * the partner sees at most one balance call per TTL window from this process.
 */
@Injectable()
export class PartnerStatus {
  private reading: BalanceReading | null = null;
  private refreshing?: Promise<void>;
  private lastRefreshStartedAt = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'LOW_BALANCE_THRESHOLD' | 'PARTNER_CACHE_TTL_MS'>,
    private readonly snapshots: PartnerSnapshots,
    private readonly circuit: PartnerCircuit,
  ) {}

  /** The partner circuit (open: the partner refuses our credentials; calls are paused, orders wait). */
  circuitState(): Promise<CircuitState> {
    return this.circuit.state();
  }

  /**
   * The balance, refreshed through PartnerSnapshots when this process's last refresh is older than
   * PARTNER_CACHE_TTL_MS. Waits at most `waitMs` for that refresh; null before the first one finished.
   */
  async balance(waitMs = PARTNER_READ_WAIT_MS): Promise<BalanceReading | null> {
    if (!this.refreshing && Date.now() - this.lastRefreshStartedAt >= this.config.PARTNER_CACHE_TTL_MS) {
      this.lastRefreshStartedAt = Date.now();
      this.refreshing = this.refresh().finally(() => (this.refreshing = undefined));
    }
    // refresh() never rejects: only the wait can run out, and then the previous reading is the answer.
    if (this.refreshing) await withTimeout(this.refreshing, waitMs).catch(() => undefined);
    return this.reading;
  }

  /** True when the balance is known and below LOW_BALANCE_THRESHOLD (currency units). */
  isLow(reading: BalanceReading | null): boolean | null {
    const amount = reading?.snapshot?.data.balance.amount;
    return amount === undefined ? null : amount < this.config.LOW_BALANCE_THRESHOLD;
  }

  private async refresh(): Promise<void> {
    const checkedAt = new Date();
    try {
      const snapshot = await this.snapshots.balance();
      const last = this.snapshots.lastFailure;
      const failed = !snapshot || snapshot.stale;
      const failure = failed
        ? last?.key === 'balance'
          ? { outcome: last.outcome, message: last.message, at: last.at }
          : { outcome: 'unknown', message: 'the partner did not give the balance', at: checkedAt }
        : null;
      this.reading = { snapshot, failure, checkedAt };
    } catch (error) {
      // Postgres (the snapshot cache) did not answer: keep the last balance, say why it is not fresh.
      this.reading = {
        snapshot: this.reading?.snapshot ? { ...this.reading.snapshot, stale: true } : null,
        failure: { outcome: 'cache_unavailable', message: (error as Error).message, at: checkedAt },
        checkedAt,
      };
    }
  }
}
