import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Pool } from 'undici';
import { KIND_OF, isHeldBack, type CallGate, type CallPermit } from './call-gate';
import { classify } from './classify';
import { retryAfterMs } from './retry-after';
import type { PartnerEndpoint, PartnerOutcome } from './outcome';
import { PartnerClock } from './partner-clock';
import {
  parseBalance,
  parseCardEnvelope,
  parseGiftCard,
  parseGiftCards,
  parseInventory,
  parsePullRequestEnvelope,
} from './schemas';
import { signRequest, type SignatureForm } from './signature';
import type { Balance, Card, GiftCard, Inventory, PullRequest } from './types';

export interface PartnerClientOptions {
  baseUrl: string;
  apiKey: string;
  identifier: string;
  sharedKeyHex: string;
  signatureForm: SignatureForm;
  /** Whole-call deadline (connect + answer), PARTNER_TIMEOUT_MS; the spec advises 10 s. */
  timeoutMs: number;
  /** Per kind of call, a deadline other than timeoutMs (PARTNER_TIMEOUT_SYNC_MS and the like). */
  timeouts?: Partial<PartnerTimeouts>;
  /** The fleet's limits: asked before every call not given a permit of its own. */
  gate?: CallGate;
  /** Kept-alive connections to the partner. */
  connections?: number;
  logger?: { debug(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Called after every call, for metrics. */
  onCall?: (event: PartnerCallEvent) => void;
  /** Our clock (tests move it); requests are signed with it plus the partner's clock offset (PartnerClock). */
  now?: () => number;
}

export interface PartnerCallEvent {
  endpoint: PartnerEndpoint;
  outcome: PartnerOutcome<unknown>['kind'];
  reason?: string;
  /** The partner's error code, when it gave one. */
  code?: string;
  /** The partner's (or our transport's) message for a non-success; never a body with a card. */
  message?: string;
  httpStatus?: number;
  /** The request ID the call carried (pulls), for the operations page. */
  requestId?: string;
  /** A pull request's status in a successful answer of createPullRequest / getPullRequest. */
  pullStatus?: string;
  /**
   * The partner refused the first signature (401) and its Date showed our time was off: the call was sent
   * again, once, signed with the partner's time. The event (outcome, duration) is the whole call's.
   */
  resigned?: true;
  /** When the call's permit last asked the fleet's limits (CallPermit.checkedAt), ms since the epoch. */
  gateCheckedAtMs?: number;
  durationMs: number;
}

/** Deadlines per kind: `sync` is POST /cards, `create` POST /pull_requests, `poll` GET /pull_requests/:id, `read` the rest. */
export interface PartnerTimeouts {
  sync: number;
  create: number;
  poll: number;
  read: number;
}

const TIMEOUT_OF: Record<PartnerEndpoint, keyof PartnerTimeouts> = {
  createCard: 'sync',
  createPullRequest: 'create',
  getPullRequest: 'poll',
  listGiftCards: 'read',
  getGiftCard: 'read',
  getCard: 'read',
  getInventory: 'read',
  getBalance: 'read',
};

const API_PREFIX = '/partners/v1';
/**
 * A 401 whose Date header shows the partner's clock this far from the time we signed with is re-sent once
 * with the partner's time: beyond the Date header's resolution (±0.5 s once centred) and a slow answer.
 */
export const RESIGN_THRESHOLD_MS = 2_000;
const MAX_BODY_BYTES = 5 * 1024 * 1024;

/**
 * Typed client of the partner API: one method per endpoint, each signing its request and classifying the
 * answer (see outcome.ts). No retries here: retrying is the jobs' business (invariant 2 lives there), with
 * one exception, the partner's time (ARCHITECTURE.md "Partner time"): a call refused 401 whose answer's Date
 * shows our signing time was off is sent again once, signed with the partner's time. A 401 means the partner
 * did nothing with the call, so the same call (same X-RequestId and body) is safe to send again.
 */
export class PartnerClient {
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly basePath: string;
  readonly timeouts: PartnerTimeouts;
  /** The partner's clock, from the Date headers of its answers: every request is signed with it. */
  readonly clock: PartnerClock;

  constructor(private readonly opts: PartnerClientOptions) {
    this.clock = new PartnerClock(opts.now ?? Date.now);
    const t = opts.timeouts ?? {};
    this.timeouts = { sync: t.sync || opts.timeoutMs, create: t.create || opts.timeoutMs, poll: t.poll || opts.timeoutMs, read: t.read || opts.timeoutMs };
    const longest = Math.max(...Object.values(this.timeouts));
    const url = new URL(opts.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(this.origin, {
      connections: opts.connections ?? 64,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      // The AbortSignal below is the deadline; undici's own timers are coarse (checked about every 500 ms)
      // and would fire early, so they only back it up.
      headersTimeout: longest + 1_000,
      bodyTimeout: longest + 1_000,
      connect: { timeout: Math.min(longest, 5_000) },
    });
  }

  listGiftCards(): Promise<PartnerOutcome<GiftCard[]>> {
    return this.call('listGiftCards', 'GET', '/gift_cards', undefined, parseGiftCards);
  }

  getGiftCard(code: string): Promise<PartnerOutcome<GiftCard>> {
    return this.call('getGiftCard', 'GET', `/gift_cards/${encodeURIComponent(code)}`, undefined, parseGiftCard);
  }

  /**
   * Synchronous pull. `requestId` must already be committed to our database (invariant 1). `permit`: the
   * fleet's leave for this call, taken by the caller before it recorded the call as sent. `stop`: aborts the
   * call before its deadline (the caller's lease on the request ID could not be renewed); nothing is sent
   * once it has fired, and a call it cut short is a timeout (its outcome unknown).
   */
  async createCard(requestId: string, giftCardCode: string, amount: number, permit?: CallPermit, stop?: AbortSignal): Promise<PartnerOutcome<Card>> {
    requireRequestId(requestId);
    const body = { card: { amount, gift_card_code: giftCardCode } };
    const out = await this.call('createCard', 'POST', '/cards', body, parseCardEnvelope, requestId, permit, stop);
    return out.kind === 'success' ? { ...out, value: out.value.card } : out;
  }

  async getCard(cardId: string): Promise<PartnerOutcome<Card>> {
    const out = await this.call('getCard', 'GET', `/cards/${encodeURIComponent(cardId)}`, undefined, parseCardEnvelope);
    return out.kind === 'success' ? { ...out, value: out.value.card } : out;
  }

  /** Asynchronous pull creation. `requestId` must already be committed to our database (invariant 1). `stop`: as createCard's. */
  async createPullRequest(requestId: string, giftCardCode: string, amount: number, permit?: CallPermit, stop?: AbortSignal): Promise<PartnerOutcome<PullRequest>> {
    requireRequestId(requestId);
    const body = { pull_request: { amount, gift_card_code: giftCardCode, request_id: requestId } };
    const out = await this.call('createPullRequest', 'POST', '/pull_requests', body, parsePullRequestEnvelope, requestId, permit, stop);
    return out.kind === 'success' ? { ...out, value: out.value.pull_request } : out;
  }

  async getPullRequest(requestId: string, permit?: CallPermit): Promise<PartnerOutcome<PullRequest>> {
    const path = `/pull_requests/${encodeURIComponent(requestId)}`;
    const out = await this.call('getPullRequest', 'GET', path, undefined, parsePullRequestEnvelope, requestId, permit);
    return out.kind === 'success' ? { ...out, value: out.value.pull_request } : out;
  }

  getInventory(giftCardCode: string): Promise<PartnerOutcome<Inventory>> {
    return this.call('getInventory', 'GET', `/inventories/${encodeURIComponent(giftCardCode)}`, undefined, parseInventory);
  }

  getBalance(): Promise<PartnerOutcome<Balance>> {
    return this.call('getBalance', 'GET', '/balance', undefined, parseBalance);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async call<T>(
    endpoint: PartnerEndpoint,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    parse: (body: unknown) => T | undefined,
    /** The pull's request ID: sent as X-RequestId on POSTs (spec, "Request ID"), reported on the call event. */
    requestId?: string,
    given?: CallPermit,
    /** Aborts the call before its deadline (see createCard). */
    stop?: AbortSignal,
  ): Promise<PartnerOutcome<T>> {
    const timeoutMs = this.timeouts[TIMEOUT_OF[endpoint]];
    let permit = given;
    if (!permit && this.opts.gate) {
      // Asked here only by callers that record nothing as sent before the call (reads, the reconciler's
      // reads of a pull request): one that is never sent is only reported as held back, never as an answer.
      const got = await this.opts.gate.acquire(KIND_OF[endpoint], { maxWaitMs: timeoutMs });
      if (isHeldBack(got)) {
        return { kind: 'unknown', reason: 'held_back', message: `not sent: our fleet-wide limit on ${KIND_OF[endpoint]} calls (${got.reason}); ask again in ${got.waitMs} ms`, retryAfterMs: got.waitMs };
      }
      permit = got;
    }
    const started = performance.now();
    const fullPath = `${this.basePath}${API_PREFIX}${path}`;
    // One deadline for the whole call, a re-signed second send included; the caller's stop cuts it shorter.
    const deadline = callDeadline(timeoutMs, stop);
    const signal = deadline.signal;
    let outcome: PartnerOutcome<T>;
    let resigned = false;
    // A span per call (tracing on only): the endpoint and request ID, never the body (a card's code).
    const span = trace.getTracer('cardpull').startSpan(`partner ${endpoint}`, { kind: SpanKind.CLIENT, attributes: { 'cardpull.endpoint': endpoint, 'http.request.method': method, ...(requestId ? { 'cardpull.request_id': requestId } : {}) } });
    try {
      let answer = await this.send(method, fullPath, body, requestId, signal, stop);
      outcome = classify(endpoint, answer.status, parseJson(answer.text), parse);
      // Refused, and the partner's Date says our signing time was off: its time, once more. Refused again
      // (or no Date to go by), it is our credentials: the outcome stays `credentials` (the circuit opens).
      if (outcome.kind === 'credentials' && answer.shownOffsetMs !== undefined && Math.abs(answer.shownOffsetMs - answer.signedOffsetMs) > RESIGN_THRESHOLD_MS) {
        this.clock.restartFrom(answer.shownOffsetMs);
        this.opts.logger?.warn(
          { partnerCall: { endpoint, requestId, code: outcome.code, signedOffsetMs: answer.signedOffsetMs, partnerOffsetMs: answer.shownOffsetMs } },
          `partner ${endpoint}: refused ${outcome.code}, its clock is ${(answer.shownOffsetMs / 1000).toFixed(1)} s from ours: sent again signed with its time`,
        );
        resigned = true;
        answer = await this.send(method, fullPath, body, requestId, signal, stop);
        outcome = classify(endpoint, answer.status, parseJson(answer.text), parse);
      }
      if (outcome.kind === 'unknown') {
        const wait = retryAfterMs(answer.headers['retry-after'], answer.headers.date);
        if (wait !== undefined) outcome.retryAfterMs = wait;
      }
    } catch (error) {
      outcome = transportFailure(error);
    } finally {
      deadline.clear();
    }
    span.setAttributes({ 'cardpull.outcome': outcome.kind, ...(resigned ? { 'cardpull.resigned': true } : {}), ...('httpStatus' in outcome && outcome.httpStatus !== undefined ? { 'http.response.status_code': outcome.httpStatus } : {}) });
    if (outcome.kind === 'unknown') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
    span.end();
    permit?.done({
      sent: true,
      ...('httpStatus' in outcome && outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
      ...(outcome.kind === 'unknown' && outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
    });
    const durationMs = performance.now() - started;
    const event: PartnerCallEvent = {
      endpoint,
      outcome: outcome.kind,
      durationMs,
      ...(outcome.kind === 'unknown' ? { reason: outcome.reason } : {}),
      ...('httpStatus' in outcome && outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
      ...('code' in outcome && outcome.code !== undefined ? { code: outcome.code } : {}),
      ...(outcome.kind !== 'success' ? { message: outcome.message } : {}),
      ...(requestId ? { requestId } : {}),
      ...(outcome.kind === 'success' ? pullStatusOf(outcome.value) : {}),
      ...(resigned ? { resigned: true as const } : {}),
      ...(permit?.checkedAt !== undefined ? { gateCheckedAtMs: permit.checkedAt } : {}),
    };
    this.opts.onCall?.(event);
    // Never log bodies (cards) nor headers (signature): the event carries what an operator needs. A pull
    // call's answer (it carries a request ID) is logged once, by its caller, with what it decided and when
    // the ID is asked next (the worker's PartnerAsk): here only at debug.
    if (outcome.kind === 'success' || requestId) this.opts.logger?.debug({ partnerCall: event }, `partner ${endpoint}: ${outcome.kind}`);
    else this.opts.logger?.warn({ partnerCall: event }, `partner ${endpoint}: ${outcome.kind}`);
    return outcome;
  }

  /**
   * One send of a call, signed with the partner's time as we know it; the answer's Date feeds the clock.
   * `signedOffsetMs`: the offset the signature used; `shownOffsetMs`: the one this answer's Date shows.
   */
  private async send(method: 'GET' | 'POST', fullPath: string, body: unknown, requestId: string | undefined, signal: AbortSignal, stop?: AbortSignal): Promise<SentAnswer> {
    // Stopped before a byte went out: the partner never saw this send (a not-connected failure, not a timeout).
    if (stop?.aborted) throw Object.assign(new Error(`not sent: ${String((stop.reason as Error | undefined)?.message ?? stop.reason)}`), { code: NOT_SENT });
    const signedOffsetMs = this.clock.offsetMs();
    const authorization = signRequest(
      {
        apiKey: this.opts.apiKey,
        identifier: this.opts.identifier,
        sharedKeyHex: this.opts.sharedKeyHex,
        form: this.opts.signatureForm,
      },
      { method, url: `${this.origin}${fullPath}`, body },
      this.clock.now,
    );
    const res = await this.pool.request({
      method,
      path: fullPath,
      headers: {
        authorization,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(requestId && method === 'POST' ? { 'x-requestid': requestId } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    // Read when the headers arrive, before the body: the Date was written just before them.
    const shownOffsetMs = this.clock.observe(res.headers.date);
    const text = await readText(res.body);
    return { status: res.statusCode, headers: res.headers, text, signedOffsetMs, shownOffsetMs };
  }
}

interface SentAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  signedOffsetMs: number;
  shownOffsetMs: number | undefined;
}

async function readText(body: { text(): Promise<string>; dump?: () => Promise<void> } & AsyncIterable<Buffer>) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw Object.assign(new Error('partner answer too large'), { code: 'BODY_TOO_LARGE' });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function pullStatusOf(value: unknown): { pullStatus?: string } {
  const status = (value as { pull_request?: { status?: unknown } } | null)?.pull_request?.status;
  return typeof status === 'string' ? { pullStatus: status } : {};
}

/** Without a request ID the partner makes one up, and the card could never be fetched again: refuse. */
function requireRequestId(requestId: string): void {
  if (!requestId || !requestId.trim()) throw new Error('a partner pull needs a request ID (committed before the call)');
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Errors of the connect step: raised before a byte of the request was written, so the partner never saw
 * the call (a refused connection, a name that does not resolve, a handshake that never finished, a send its
 * caller stopped before it began: CARDPULL_NOT_SENT). Errors
 * that may come after the request was written (ECONNRESET, EHOSTUNREACH or ETIMEDOUT on a live socket, a
 * socket closed mid-answer) are not here: those calls may have started work.
 */
const NOT_SENT = 'CARDPULL_NOT_SENT';
const NOT_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', NOT_SENT]);

/** What a call that threw (no HTTP answer) means: a timeout, a connection never made, or one broken. */
/**
 * A call's signal: aborted at its deadline (a TimeoutError, as AbortSignal.timeout gives) or when `stop`
 * is. One controller and one timer, cleared when the call ends: AbortSignal.any, per call, cost the worker
 * about 9 us of CPU per card (bench/e2e.ts profiles) and keeps its dependants until they are collected.
 */
export function callDeadline(timeoutMs: number, stop?: AbortSignal): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`The operation timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
  if (!stop) return { signal: controller.signal, clear: () => clearTimeout(timer) };
  const onStop = () => controller.abort(stop.reason);
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    },
  };
}

export function transportFailure<T>(error: unknown): PartnerOutcome<T> {
  const err = error as { name?: string; code?: string; message?: string };
  if (err.code !== undefined && NOT_CONNECTED_CODES.has(err.code)) {
    return { kind: 'unknown', reason: 'not_connected', message: `partner not reached, nothing was sent: ${err.code} ${err.message ?? ''}`.trim() };
  }
  const timeout =
    err.name === 'TimeoutError' ||
    err.name === 'AbortError' ||
    err.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    err.code === 'UND_ERR_BODY_TIMEOUT' ||
    err.code === 'UND_ERR_ABORTED';
  if (timeout) return { kind: 'unknown', reason: 'timeout', message: `partner call timed out (${err.message ?? err.name})` };
  if (err.code === 'BODY_TOO_LARGE') return { kind: 'unknown', reason: 'unparseable', message: 'partner answer too large' };
  return {
    kind: 'unknown',
    reason: 'network',
    message: `partner connection broken: ${err.code ?? err.name ?? 'error'} ${err.message ?? ''}`.trim(),
  };
}
