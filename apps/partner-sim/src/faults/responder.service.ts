import { STATUS_CODES } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SimAnswer } from '../common/answer';
import { SchedulerService } from '../state/scheduler.service';
import { SimStateService } from '../state/sim-state.service';
import { FaultRegistry, type FaultContext } from './fault-registry';
import { PartnerError } from '../common/partner-error';
import { DEFAULT_LATENCY_MS, DEFAULT_STATUS, retryAfterHeader, type Fault } from '@cardpull/sim-contract';

export const latencyOf = (fault: Fault): number => fault.latency_ms ?? DEFAULT_LATENCY_MS[fault.mode] ?? 0;

/**
 * What a partner answers before doing anything: a rate limit (429, envelope code rate_limited, Retry-After),
 * the envelope with the fault's error_code (a business error, say), or what a broken partner (or the proxy
 * in front of it) answers: an HTML error page. Nothing is done or stored.
 */
export function brokenAnswer(fault: Fault, nowMs: number): SimAnswer {
  const status = fault.status ?? DEFAULT_STATUS[fault.mode] ?? 500;
  const headers = retryAfterHeader(fault, fault.mode === 'rate_limited' ? 1 : undefined, nowMs);
  if (fault.mode === 'rate_limited' || fault.error_code) {
    const code = fault.error_code ?? 'rate_limited';
    const error = new PartnerError(status, code, fault.mode === 'rate_limited' ? 'Too many requests: slow down' : `${code} (scripted)`, headers);
    return error.toAnswer();
  }
  const text = STATUS_CODES[status] ?? 'Error';
  return {
    status,
    body: `<!DOCTYPE html><html><head><title>${status} ${text}</title></head><body><h1>${text}</h1></body></html>`,
    contentType: 'text/html; charset=utf-8',
    headers,
  };
}

/** A fault that answers before anything is done (error_before_issue, rate_limited). */
export const answersBeforeAnything = (fault: Fault | null): boolean => fault?.mode === 'error_before_issue' || fault?.mode === 'rate_limited';

/** Sends the simulator's answers, through whatever delivery fault hit the request. */
@Injectable()
export class ResponderService {
  constructor(
    private readonly faults: FaultRegistry,
    private readonly scheduler: SchedulerService,
    private readonly state: SimStateService,
  ) {}

  /**
   * A GET: a fault may delay it (latency; the answer is computed after the delay so it is current), answer
   * an error page instead (error_before_issue), hold it (hang) or cut the connection (reset).
   */
  async read(req: FastifyRequest, reply: FastifyReply, ctx: Omit<FaultContext, 'newPull'>, compute: () => SimAnswer): Promise<void> {
    const fault = this.faults.select(req, { ...ctx, newPull: true });
    if (answersBeforeAnything(fault)) return this.send(req, reply, brokenAnswer(fault!, this.state.clock.nowMs()));
    if (fault?.mode === 'latency') await this.scheduler.sleep(latencyOf(fault));
    this.send(req, reply, compute(), fault);
  }

  /**
   * Sends `answer`, unless a delivery fault breaks it: hang holds it for latency_ms, error_after_issue
   * replaces it with an error page, reset destroys the connection without an answer. Whatever the pull
   * did (a card issued, a pull request created) stays done: only the answer is lost.
   */
  send(req: FastifyRequest, reply: FastifyReply, answer: SimAnswer, fault?: Fault | null): void {
    switch (fault?.mode) {
      case 'hang':
        if (req.sim.entry) req.sim.entry.status = answer.status;
        this.scheduler.after(latencyOf(fault), () => write(reply, answer));
        return;
      case 'reset':
        if (req.sim.entry) req.sim.entry.status = null;
        reply.hijack();
        req.raw.socket?.destroy();
        return;
      case 'error_after_issue':
        write(reply, brokenAnswer(fault, this.state.clock.nowMs()));
        return;
      default:
        write(reply, answer);
    }
  }
}

function write(reply: FastifyReply, answer: SimAnswer): void {
  // A held answer whose client gave up: nothing to write to.
  if (reply.sent || reply.raw.destroyed) return;
  reply.code(answer.status);
  if (answer.headers) reply.headers(answer.headers);
  if (answer.contentType) reply.type(answer.contentType);
  void reply.send(answer.body);
}
