import { Injectable, Logger } from '@nestjs/common';
import { OrderQueue } from '../queue/order-queue.service';
import { PartnerStateRepository, type CircuitState } from './partner-state.repository';

export type { CircuitState };

/**
 * The partner circuit (ARCHITECTURE.md: unauthorized / invalid_signature). Opening it pauses the orders
 * queue so no worker calls the partner with credentials it refuses; nothing is failed. The state lives
 * in Postgres (it must survive a Redis flush) and the pause in Redis; `reconcile` re-applies the pause.
 */
@Injectable()
export class PartnerCircuit {
  private readonly log = new Logger(PartnerCircuit.name);

  constructor(
    private readonly stored: PartnerStateRepository,
    private readonly orders: OrderQueue,
  ) {}

  async open(code: string, message: string): Promise<void> {
    if (await this.stored.openCircuit(code, message)) {
      this.log.error(
        { alert: 'partner_credentials_refused', code, partnerMessage: message },
        `ALERT: the partner refuses our credentials (${code}). Partner calls are paused, no order is failed. ` +
          'Check PARTNER_API_KEY, PARTNER_IDENTIFIER, PARTNER_SHARED_KEY, PARTNER_SIGNATURE_FORM and the clock; orders resume once the probe succeeds.',
      );
    }
    await this.orders.pause().catch((e: Error) => this.log.warn({ err: e.message }, 'could not pause the orders queue'));
  }

  async close(): Promise<boolean> {
    const closed = await this.stored.closeCircuit();
    await this.orders.resume();
    if (closed) this.log.log('the partner accepts our credentials again: partner calls resume');
    return closed;
  }

  async noteProbe(code: string, message: string): Promise<void> {
    await this.stored.noteProbe(code, message);
  }

  state(): Promise<CircuitState> {
    return this.stored.circuit();
  }

  /** Makes Redis agree with Postgres (after a flush the pause is gone; after a crash a stale pause may remain). */
  async reconcile(): Promise<CircuitState> {
    const current = await this.state();
    const paused = await this.orders.isPaused();
    if (current.state === 'open' && !paused) await this.orders.pause();
    if (current.state === 'closed' && paused) await this.orders.resume();
    return current;
  }
}
