import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { createPgPool } from '@cardpull/db';
import { StepsRepository } from '@cardpull/orders';

/** A lease on an order held by one of this process's partner calls (LeaseKeeper.hold). */
export interface LeaseHold {
  /** Fires when the lease could not be renewed in time: the call must stop (the partner client aborts it). */
  readonly signal: AbortSignal;
  /**
   * Whether the lease still holds for certain, by this process's monotonic clock (not by a timer, which a
   * stalled event loop fires late): asked right before the call is sent; false also fires `signal`.
   */
  holds(): boolean;
  /** The call is over: no more renewals. */
  release(): void;
}

interface Held {
  orderId: string;
  owner: string;
  /** When the last statement that set the lease (the take, then each renewal) was sent: performance.now(). */
  from: number;
  controller: AbortController;
  timer?: NodeJS.Timeout;
}

/**
 * Keeps the leases of this process's partner calls alive (invariant 2: one sender per request ID at a time).
 * A send's lease is short (ORDER_LEASE_MS) so that a killed worker's orders are taken over soon after it
 * died, not after the whole deadline of its calls (PARTNER_TIMEOUT_MS); while a call is in flight its lease
 * is renewed every third of ORDER_LEASE_MS, all of the process's leases in one statement, on a connection
 * of the keeper's own (a renewal never waits behind the steps' statements for one of the pool's).
 *
 * The lease never runs out while its holder may still be sending: a lease set by a statement sent at
 * local time t lasts at least until t + ORDER_LEASE_MS (Postgres' now() is taken after the statement
 * arrived), and a call whose lease was not renewed by then, less a margin, is aborted (`signal`); a renewal
 * that finds the lease ended or held by another owner aborts it at once. The step runner asks `holds()`
 * right before the send, so a call is never sent on a lease that ran out while its process stood still.
 */
@Injectable()
export class LeaseKeeper implements OnApplicationShutdown {
  private readonly log = new Logger(LeaseKeeper.name);
  private readonly held = new Set<Held>();
  private ticker?: NodeJS.Timeout;
  private renewing = false;
  private pool?: Pool;
  readonly leaseMs: number;
  /** A lease is renewed once this old (a third of it): two renewals may fail before its call is stopped. */
  readonly renewAfterMs: number;
  /** A call whose lease was not renewed is stopped this long before the lease's end. */
  readonly marginMs: number;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'DATABASE_URL' | 'ORDER_LEASE_MS'>,
    private readonly steps: StepsRepository,
  ) {
    this.leaseMs = config.ORDER_LEASE_MS;
    this.renewAfterMs = this.leaseMs / 3;
    this.marginMs = Math.min(500, this.leaseMs / 6);
  }

  /** Holds the lease `owner` took on the order by a statement sent at `from` (performance.now()). */
  hold(orderId: string, owner: string, from: number): LeaseHold {
    const h: Held = { orderId, owner, from, controller: new AbortController() };
    this.held.add(h);
    this.arm(h);
    this.ticker ??= setInterval(() => void this.renew(), this.renewAfterMs / 2).unref();
    return {
      signal: h.controller.signal,
      holds: () => {
        if (!h.controller.signal.aborted && performance.now() >= this.stopAt(h)) this.lost(h, 'it was not renewed in time');
        return !h.controller.signal.aborted;
      },
      release: () => this.drop(h),
    };
  }

  /** How many leases this process holds now (tests, metrics). */
  get size(): number {
    return this.held.size;
  }

  /**
   * One renewal of every lease held a third of ORDER_LEASE_MS or longer (the timer calls it; concurrent calls
   * share nothing: one runs at a time). A lease not renewed (ended, or taken by another owner) stops its call.
   */
  async renew(): Promise<void> {
    if (this.renewing) return;
    const now = performance.now();
    const due = [...this.held].filter((h) => now - h.from >= this.renewAfterMs);
    if (!due.length) return;
    this.renewing = true;
    const sentAt = performance.now();
    try {
      const renewed = await this.steps.renewLeases(due, this.leaseMs, this.ownPool());
      for (const h of due) {
        if (!this.held.has(h)) continue;
        if (renewed.has(`${h.orderId} ${h.owner}`)) {
          h.from = sentAt;
          this.arm(h);
        } else {
          this.lost(h, 'it had ended or another owner held it');
        }
      }
    } catch (error) {
      // The deadlines stand: a call whose lease no renewal reached in time is stopped by its timer.
      this.log.warn({ err: (error as Error).message, leases: due.length }, `could not renew ${due.length} order lease(s); retrying`);
    } finally {
      this.renewing = false;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    for (const h of this.held) clearTimeout(h.timer);
    this.held.clear();
    await this.pool?.end().catch(() => undefined);
  }

  private stopAt(h: Held): number {
    return h.from + this.leaseMs - this.marginMs;
  }

  private arm(h: Held): void {
    clearTimeout(h.timer);
    h.timer = setTimeout(() => this.lost(h, 'it was not renewed in time'), Math.max(0, this.stopAt(h) - performance.now())).unref();
  }

  private lost(h: Held, why: string): void {
    if (!this.held.has(h)) return;
    this.drop(h);
    const message = `the order's lease could not be kept (${why}): the call is abandoned before the lease ends`;
    this.log.warn({ orderId: h.orderId, owner: h.owner }, message);
    h.controller.abort(new DOMException(message, 'AbortError'));
  }

  private drop(h: Held): void {
    clearTimeout(h.timer);
    this.held.delete(h);
    if (!this.held.size && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  /**
   * One connection of the keeper's own, opened at the first renewal (closed when idle by the pool). A renewal
   * not answered within a lease is given up (the next one is tried; the calls' timers stand meanwhile).
   */
  private ownPool(): Pool {
    this.pool ??= createPgPool(this.config.DATABASE_URL, 1, { preparedStatements: false, connectionTimeoutMs: this.leaseMs, queryTimeoutMs: this.leaseMs });
    return this.pool;
  }
}
