import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { MODE_APPLIES_TO, type Fault, type FaultSpec, type RequestKind } from './fault-spec';

export interface FaultContext {
  kind: RequestKind;
  giftCardCode?: string | null;
  requestId?: string | null;
  /**
   * False when a POST repeats a request ID the partner already knows (a replay, an in-progress pull, a used
   * pull request ID). Faults that change how a pull runs do not touch those; only error_before_issue
   * (the partner failing before looking at anything) does.
   */
  newPull: boolean;
}

/** Scripted faults, matched in the order they were added: the first one that hits a request applies. */
@Injectable()
export class FaultRegistry {
  private faults: Fault[] = [];
  private nextId = 1;

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

  /** The fault that hits this request, if any (counted, and written on the request's ledger row). */
  select(req: FastifyRequest, ctx: FaultContext): Fault | null {
    for (const fault of this.faults) {
      if (!this.matches(fault, ctx)) continue;
      // The share is drawn only for requests that match, so `share` is the fraction of those.
      if (fault.share < 1 && Math.random() >= fault.share) continue;
      fault.hits += 1;
      if (req.sim.entry) req.sim.entry.fault = fault.mode;
      return fault;
    }
    return null;
  }

  private matches(fault: Fault, ctx: FaultContext): boolean {
    if (fault.times !== undefined && fault.hits >= fault.times) return false;
    if (fault.endpoint !== 'any' && fault.endpoint !== ctx.kind) return false;
    if (!MODE_APPLIES_TO[fault.mode].includes(ctx.kind)) return false;
    if (!ctx.newPull && fault.mode !== 'error_before_issue') return false;
    if (fault.gift_card_codes && !(ctx.giftCardCode && fault.gift_card_codes.includes(ctx.giftCardCode))) return false;
    if (fault.request_ids && !(ctx.requestId && fault.request_ids.includes(ctx.requestId))) return false;
    return true;
  }
}
