import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SimStateService } from '../state/sim-state.service';
import { limitKindOf } from '../limits/limiter';
import { PartnerError } from './partner-error';
import type { SimRequestContext } from './request-context';

const PARTNER_PREFIX = '/partners/v1/';
const SYNC_PULL_PATH = '/partners/v1/cards';
const PULL_REQUEST_PATH = /^\/partners\/v1\/pull_requests\/([^/?]+)$/;

/**
 * Per-request bookkeeping, in Fastify hooks so it covers every partner request, rejected ones included:
 *  - the ledger row (opened on arrival, its status written when the answer is sent, its finished_at when the
 *    answer has been written or the connection closed without one: a reset, or a client that gave up);
 *  - the Date header of every answer, by the partner's clock (the machine's plus its offset);
 *  - POST /cards: the request ID. The spec does not show where a generated one is returned: we always
 *    echo it in the X-RequestId response header (set here, so even a 401 carries it).
 */
export function registerRequestHooks(fastify: FastifyInstance, state: SimStateService): void {
  // Declared up front (Fastify's advice for request properties); each request gets its own object on arrival.
  fastify.decorateRequest('sim', null as unknown as SimRequestContext);

  fastify.addHook('onRequest', async (req, reply) => {
    req.sim = { entry: null, requestId: null, body: { kind: 'none' }, rawBody: null };
    const path = req.originalUrl.split('?')[0] ?? '';
    if (!path.startsWith(PARTNER_PREFIX)) return;
    if (req.method === 'POST' && path === SYNC_PULL_PATH) {
      const given = req.headers['x-requestid'];
      req.sim.requestId = typeof given === 'string' && given.trim() !== '' ? given : randomUUID();
      reply.header('X-RequestId', req.sim.requestId);
    }
    const pathId = req.method === 'GET' ? PULL_REQUEST_PATH.exec(path)?.[1] : undefined;
    const ledger = state.world.ledger;
    const entry = ledger.openRequest(req.method, path, req.sim.requestId ?? (pathId === undefined ? null : decodeURIComponent(pathId)));
    req.sim.entry = entry;
    // 'finish': the whole answer was handed to the socket; 'close': also when the connection went away first
    // (hijacked and destroyed by a reset fault, or closed by a client that stopped waiting for a held answer).
    const finished = () => ledger.finishRequest(entry);
    reply.raw.once('finish', finished);
    reply.raw.once('close', finished);
    // The partner's rate limits (SIM_LIMITS, PUT /_sim/limits): beyond them, 429 before anything is done.
    const admission = state.limiter.admit(limitKindOf(req.method, path));
    if (!admission.ok) {
      // retry_after_s 0: a 429 without Retry-After (the spec does not show whether the partner sends one).
      const answer = new PartnerError(429, 'rate_limited', 'Too many requests: slow down', admission.retryAfterS > 0 ? { 'retry-after': String(admission.retryAfterS) } : {}).toAnswer();
      return reply.code(answer.status).headers(answer.headers ?? {}).send(answer.body);
    }
    reply.raw.once('finish', admission.release);
    reply.raw.once('close', admission.release);
  });

  // The async pull's request ID is in the body, parsed only now.
  fastify.addHook('preHandler', async (req) => {
    if (req.sim.entry && req.sim.entry.request_id === null) req.sim.entry.request_id = bodyRequestId(req);
  });

  fastify.addHook('onSend', async (req, reply, payload) => {
    if (req.sim?.entry) req.sim.entry.status = reply.statusCode;
    // Node would send the machine's time; the partner says its own (SIM_CLOCK_OFFSET_S, PUT /_sim/clock).
    reply.header('date', new Date(state.clock.nowMs()).toUTCString());
    return payload;
  });
}

function bodyRequestId(req: FastifyRequest): string | null {
  if (req.sim.body.kind !== 'json') return null;
  const wrapper = (req.sim.body.value as { pull_request?: { request_id?: unknown } } | null)?.pull_request;
  return typeof wrapper?.request_id === 'string' ? wrapper.request_id : null;
}
