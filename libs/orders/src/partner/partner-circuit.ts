import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import { OrderQueue } from '../order-queue.service';

export interface CircuitState {
  state: 'open' | 'closed';
  openedAt: Date | null;
  closedAt: Date | null;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  lastProbeAt: Date | null;
}

/**
 * The partner circuit (ARCHITECTURE.md: unauthorized / invalid_signature). Opening it pauses the orders
 * queue so no worker calls the partner with credentials it refuses; nothing is failed. The state lives
 * in Postgres (it must survive a Redis flush) and the pause in Redis; `reconcile` re-applies the pause.
 */
@Injectable()
export class PartnerCircuit {
  private readonly log = new Logger(PartnerCircuit.name);

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly orders: OrderQueue,
  ) {}

  async open(code: string, message: string): Promise<void> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO partner_circuit (id, state, opened_at, last_error_code, last_error_message, updated_at)
       VALUES (1, 'open', now(), $1, $2, now())
       ON CONFLICT (id) DO UPDATE SET state = 'open', opened_at = now(), last_error_code = $1, last_error_message = $2, updated_at = now()
       WHERE partner_circuit.state = 'closed'`,
      [code, message],
    );
    if (rowCount) {
      this.log.error(
        { alert: 'partner_credentials_refused', code, partnerMessage: message },
        `ALERT: the partner refuses our credentials (${code}). Partner calls are paused, no order is failed. ` +
          'Check PARTNER_API_KEY, PARTNER_IDENTIFIER, PARTNER_SHARED_KEY, PARTNER_SIGNATURE_FORM and the clock; orders resume once the probe succeeds.',
      );
    }
    await this.orders.queue.pause().catch((e: Error) => this.log.warn({ err: e.message }, 'could not pause the orders queue'));
  }

  async close(): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE partner_circuit SET state = 'closed', closed_at = now(), last_probe_at = now(), updated_at = now() WHERE id = 1 AND state = 'open'`,
    );
    await this.orders.queue.resume();
    if (rowCount) this.log.log('the partner accepts our credentials again: partner calls resume');
    return !!rowCount;
  }

  async noteProbe(code: string, message: string): Promise<void> {
    await this.pool.query(
      `UPDATE partner_circuit SET last_probe_at = now(), last_error_code = $1, last_error_message = $2, updated_at = now() WHERE id = 1`,
      [code, message],
    );
  }

  async state(): Promise<CircuitState> {
    const { rows } = await this.pool.query<CircuitState>(
      `SELECT state, opened_at AS "openedAt", closed_at AS "closedAt", last_error_code AS "lastErrorCode",
              last_error_message AS "lastErrorMessage", last_probe_at AS "lastProbeAt" FROM partner_circuit WHERE id = 1`,
    );
    return rows[0] ?? { state: 'closed', openedAt: null, closedAt: null, lastErrorCode: null, lastErrorMessage: null, lastProbeAt: null };
  }

  /** Makes Redis agree with Postgres (after a flush the pause is gone; after a crash a stale pause may remain). */
  async reconcile(): Promise<CircuitState> {
    const current = await this.state();
    const paused = await this.orders.queue.isPaused();
    if (current.state === 'open' && !paused) await this.orders.queue.pause();
    if (current.state === 'closed' && paused) await this.orders.queue.resume();
    return current;
  }
}
