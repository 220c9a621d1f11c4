import { Injectable } from '@nestjs/common';
import { PartnerClient } from '@cardpull/partner-client';
import { PartnerCircuit } from '@cardpull/orders';
import { PeriodicTask } from '../tasks/periodic-task';

/** While the circuit is open, calls GET /balance every CIRCUIT_PROBE_INTERVAL_MS; the first success closes it. */
@Injectable()
export class CircuitProbe extends PeriodicTask<'closed' | 'still_open' | 'not_open'> {
  protected readonly taskName = 'circuit probe';
  protected readonly every = 'CIRCUIT_PROBE_INTERVAL_MS';

  constructor(
    private readonly circuit: PartnerCircuit,
    private readonly partner: PartnerClient,
  ) {
    super();
  }

  /** A closed circuit (the usual case) has nothing to probe: the tick claims nothing. */
  protected override async idle(): Promise<{ answer: 'not_open' } | null> {
    return (await this.circuit.state()).state === 'open' ? null : { answer: 'not_open' };
  }

  protected tick() {
    return this.probe();
  }

  async probe(): Promise<'closed' | 'still_open' | 'not_open'> {
    const state = await this.circuit.state();
    if (state.state !== 'open') return 'not_open';
    const out = await this.partner.getBalance();
    if (out.kind === 'success') {
      await this.circuit.close();
      return 'closed';
    }
    const code = out.kind === 'credentials' ? out.code : out.kind === 'unknown' ? out.reason : out.kind;
    await this.circuit.noteProbe(code, out.message);
    return 'still_open';
  }
}
