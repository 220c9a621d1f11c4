import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import { BEFORE_ANYTHING, MODE_APPLIES_TO, faultSpecSchema, isReading, type Fault, type FaultSpec, type ReadingMode, type RequestKind } from '@cardpull/sim-contract';

export interface FaultContext {
  kind: RequestKind;
  giftCardCode?: string | null;
  requestId?: string | null;
  /**
   * False when a POST repeats a request ID the partner already knows (a replay, an in-progress pull, a used
   * pull request ID). Faults that change how a pull runs do not touch those; only the ones that act before
   * the partner looks at anything (error_before_issue, rate_limited) and the readings do.
   */
  newPull: boolean;
}

/**
 * Scripted faults. Delivery faults are matched in the order they were added: the first one that hits a
 * request applies. Readings (see READING_MODES) are asked for by mode, each on its own, so one request can
 * meet a reading and a delivery fault.
 */
@Injectable()
export class FaultRegistry {
  private faults: Fault[] = [];
  private nextId = 1;
  private readonly configured: FaultSpec[];

  /** SIM_FAULTS: installed now and again by `reset`. A spec that does not validate stops the simulator, naming the setting. */
  constructor(@Inject(SIM_CONFIG) config: Pick<SimConfig, 'SIM_FAULTS'> = { SIM_FAULTS: [] }) {
    this.configured = config.SIM_FAULTS.map((raw, i) => {
      const parsed = faultSpecSchema.safeParse(raw);
      if (!parsed.success) {
        const why = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'spec'}: ${issue.message}`).join('; ');
        throw new Error(`SIM_FAULTS: fault ${i + 1} is not valid (${why})`);
      }
      return parsed.data;
    });
    this.reset();
  }

  /** Back to SIM_FAULTS alone (POST /_sim/reset). */
  reset(): void {
    this.faults = [];
    for (const spec of this.configured) this.add(spec);
  }

  add(spec: FaultSpec): Fault {
    const fault: Fault = { ...spec, id: `fault-${this.nextId++}`, hits: 0 };
    this.faults.push(fault);
    return fault;
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((f) => f.id !== id);
    return this.faults.length < before;
  }

  clear(): number {
    const count = this.faults.length;
    this.faults = [];
    return count;
  }

  /** The delivery fault that hits this request, if any (counted, and written on the request's ledger row). */
  select(req: FastifyRequest, ctx: FaultContext): Fault | null {
    return this.first(req, ctx, (f) => !isReading(f.mode));
  }

  /**
   * The reading `mode` that applies to this request, if any (counted, written on the ledger row as `reading`):
   * the first of that mode that matches, wins its share draw and would change the answer (`changes(fault)`);
   * hits count the answers a reading changed.
   */
  reading(req: FastifyRequest, ctx: FaultContext, mode: ReadingMode, changes: (fault: Fault) => boolean = () => true): Fault | null {
    return this.first(req, ctx, (f) => f.mode === mode, changes);
  }

  private first(req: FastifyRequest, ctx: FaultContext, family: (f: Fault) => boolean, changes: (fault: Fault) => boolean = () => true): Fault | null {
    for (const fault of this.faults) {
      if (!family(fault) || !this.matches(fault, ctx)) continue;
      // The share is drawn only for requests that match, so `share` is the fraction of those.
      if (fault.share < 1 && Math.random() >= fault.share) continue;
      // One that would not change this answer leaves it to the next reading of the mode (two read_lag readings, say: from creation and after a 422).
      if (!changes(fault)) continue;
      fault.hits += 1;
      if (req.sim.entry) {
        if (isReading(fault.mode)) req.sim.entry.reading = fault.mode;
        else req.sim.entry.fault = fault.mode;
      }
      return fault;
    }
    return null;
  }

  private matches(fault: Fault, ctx: FaultContext): boolean {
    if (fault.times !== undefined && fault.hits >= fault.times) return false;
    if (fault.endpoint !== 'any' && fault.endpoint !== ctx.kind) return false;
    if (!MODE_APPLIES_TO[fault.mode].includes(ctx.kind)) return false;
    if (!ctx.newPull && !isReading(fault.mode) && !BEFORE_ANYTHING.includes(fault.mode)) return false;
    if (fault.gift_card_codes && !(ctx.giftCardCode && fault.gift_card_codes.includes(ctx.giftCardCode))) return false;
    if (fault.request_ids && !(ctx.requestId && fault.request_ids.includes(ctx.requestId))) return false;
    return true;
  }
}
