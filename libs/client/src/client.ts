import { randomUUID } from 'node:crypto';
import type { CreateOrderRequest, Order, OrderList, OrderResponse, Subscription, SubscriptionList, SubscriptionResponse } from './api-types';
import { CardpullError, CardpullNetworkError, errorFromAnswer } from './errors';

/** Sent as User-Agent (`cardpull-client/<version>`); the same as package.json's version. */
export const CLIENT_VERSION = '0.1.0';

/** What `wait` waits for: the statuses the API's own long-poll stops at. */
export const FINAL_STATUSES: readonly Order['status'][] = ['completed', 'failed', 'needs_attention'];

/** The API holds one long-poll at most this long (`?wait=0..30`). */
const MAX_WAIT_PER_CALL_S = 30;
/** The API answers this header when it did not hold the long-poll (too many under way for the client). */
const WAIT_CAPPED_HEADER = 'x-cardpull-wait-capped';

export interface RetryOptions {
  /** Tries in all, the first included (default 5): network errors, 5xx and 429 are tried again. */
  attempts?: number;
  /** The first backoff (default 250 ms); it doubles each try, with full jitter. */
  baseDelayMs?: number;
  /** The largest backoff (default 8 s). */
  maxDelayMs?: number;
  /** A 429's Retry-After longer than this is not waited for: the error is thrown (default 60 s). */
  maxRetryAfterMs?: number;
}

export interface CardpullClientOptions {
  /** The API's address, e.g. `https://cardpull.internal` (no `/v1`). */
  baseUrl: string;
  /** An API key of API_KEYS (sent as `Authorization: Bearer <key>`). */
  apiKey: string;
  retry?: RetryOptions;
  /** Time for one answer, on top of any `wait` (default 30 s); beyond, the try counts as a network error. */
  timeoutMs?: number;
  /** Another fetch (a proxy agent, tests); default the global fetch of Node 20+. */
  fetch?: typeof fetch;
}

export interface CreateOrderOptions {
  /** Your key for this order (e.g. the cart id). Default: a random UUID. Every retry sends the same key. */
  idempotencyKey?: string;
  /** Seconds to wait for the order to be completed, failed or needs_attention (long-polls of at most 30 s each). */
  wait?: number;
  signal?: AbortSignal;
}

export interface GetOrderOptions {
  /** Seconds to wait for the order to be completed, failed or needs_attention (long-polls of at most 30 s each). */
  wait?: number;
  signal?: AbortSignal;
}

export interface ListOrdersFilter {
  status?: Order['status'];
  gift_card_code?: string;
  /** Orders per request (1-100, default 20); the iterator goes through every page anyway. */
  pageSize?: number;
  signal?: AbortSignal;
}

interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Seconds the server may hold the answer (added to the timeout). */
  holdSeconds?: number;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/**
 * The client of cardpull's internal API. Every call is tried again on a network error, a 5xx or a 429 (its
 * Retry-After honoured), with exponential backoff and jitter, a bounded number of times; a POST always with
 * the same Idempotency-Key, so a retry can never order a second card.
 */
export class CardpullClient {
  private readonly baseUrl: string;
  private readonly retry: Required<RetryOptions>;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly options: CardpullClientOptions) {
    if (!options.baseUrl) throw new TypeError('CardpullClient needs baseUrl');
    if (!options.apiKey) throw new TypeError('CardpullClient needs apiKey');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.retry = { attempts: 5, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000, ...options.retry };
    if (!Number.isInteger(this.retry.attempts) || this.retry.attempts < 1) throw new TypeError('retry.attempts must be an integer of at least 1');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchFn = options.fetch ?? globalThis.fetch;
  }

  /**
   * Orders a gift card. Answers the order (pending, or final when `wait` was long enough). A replay of the
   * same key and body answers the same order; the same key with another body throws IdempotencyKeyReusedError.
   * If every try fails, the error carries `idempotencyKey`: getOrderByIdempotencyKey finds the order later.
   */
  async createOrder(input: CreateOrderRequest, options: CreateOrderOptions = {}): Promise<Order> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const deadline = this.deadlineOf(options.wait);
    const hold = this.holdFor(deadline);
    const answer = await this.call<OrderResponse>({
      method: 'POST',
      path: `/v1/orders${hold ? `?wait=${hold}` : ''}`,
      body: input,
      headers: { 'idempotency-key': idempotencyKey },
      holdSeconds: hold,
      idempotencyKey,
      signal: options.signal,
    });
    return this.waitUntilFinal(answer, deadline, options.signal);
  }

  /** One of your orders, by id; with `wait`, once it is final (or when the seconds run out). Throws OrderNotFoundError. */
  async getOrder(id: string, options: GetOrderOptions = {}): Promise<Order> {
    const deadline = this.deadlineOf(options.wait);
    return this.waitUntilFinal(await this.getOnce(`/v1/orders/${encodeURIComponent(id)}`, deadline, options.signal), deadline, options.signal);
  }

  /** One of your orders, by the Idempotency-Key it was created with (you lost our answer). Throws OrderNotFoundError. */
  async getOrderByIdempotencyKey(idempotencyKey: string, options: GetOrderOptions = {}): Promise<Order> {
    const deadline = this.deadlineOf(options.wait);
    const answer = await this.getOnce(`/v1/orders/by-idempotency-key/${encodeURIComponent(idempotencyKey)}`, deadline, options.signal);
    return this.waitUntilFinal(answer, deadline, options.signal);
  }

  /** Every one of your orders that matches, newest first, page after page (cursor pagination). */
  async *listOrders(filter: ListOrdersFilter = {}): AsyncGenerator<Order, void, undefined> {
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams();
      if (filter.status) query.set('status', filter.status);
      if (filter.gift_card_code) query.set('gift_card_code', filter.gift_card_code);
      if (filter.pageSize !== undefined) query.set('limit', String(filter.pageSize));
      if (cursor) query.set('cursor', cursor);
      const qs = query.toString();
      const page: Answer<OrderList> = await this.call<OrderList>({ method: 'GET', path: `/v1/orders${qs ? `?${qs}` : ''}`, signal: filter.signal });
      yield* page.body.orders;
      cursor = page.body.next_cursor;
    } while (cursor);
  }

  /** Your subscriptions to events beyond your orders' (`catalog.changed`), sent to your callback URL. */
  async subscriptions(options: { signal?: AbortSignal } = {}): Promise<Subscription[]> {
    return (await this.call<SubscriptionList>({ method: 'GET', path: '/v1/subscriptions', signal: options.signal })).body.subscriptions;
  }

  /**
   * Subscribes to `catalog.changed` (scope subscriptions:write): a signed callback to your callback URL each time
   * the partner's catalog changes. Idempotent (`created` false when subscribed already); throws
   * CallbackNotConfiguredError when your client has no callback URL and secret configured.
   */
  async subscribe(eventType: Subscription['event_type'], options: { signal?: AbortSignal } = {}): Promise<SubscriptionResponse> {
    return (await this.call<SubscriptionResponse>({ method: 'PUT', path: `/v1/subscriptions/${encodeURIComponent(eventType)}`, signal: options.signal })).body;
  }

  /** Stops `catalog.changed` (idempotent). Events written before are still delivered. */
  async unsubscribe(eventType: Subscription['event_type'], options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.call({ method: 'DELETE', path: `/v1/subscriptions/${encodeURIComponent(eventType)}`, signal: options.signal });
  }

  private deadlineOf(wait: number | undefined): number {
    if (wait === undefined) return 0;
    if (!Number.isFinite(wait) || wait < 0) throw new TypeError('wait must be a number of seconds, 0 or more');
    return Date.now() + wait * 1000;
  }

  /** Whole seconds the next long-poll may take (0: do not hold); the API takes whole seconds. */
  private holdFor(deadline: number): number {
    return Math.max(0, Math.min(MAX_WAIT_PER_CALL_S, Math.round((deadline - Date.now()) / 1000)));
  }

  private getOnce(path: string, deadline: number, signal?: AbortSignal): Promise<Answer<OrderResponse>> {
    const hold = this.holdFor(deadline);
    return this.call<OrderResponse>({ method: 'GET', path: `${path}${hold ? `?wait=${hold}` : ''}`, holdSeconds: hold, signal });
  }

  /** Long-polls GET /v1/orders/{id} until the order is final or the deadline passes. */
  private async waitUntilFinal(answer: Answer<OrderResponse>, deadline: number, signal?: AbortSignal): Promise<Order> {
    let current = answer;
    let capped = 0;
    while (!FINAL_STATUSES.includes(current.body.order.status) && this.holdFor(deadline) > 0) {
      // The API did not hold the poll (too many of this client's under way): pause before asking again.
      if (current.headers.get(WAIT_CAPPED_HEADER)) await sleep(Math.min(250 * 2 ** capped++, 2_000, deadline - Date.now()), signal);
      if (this.holdFor(deadline) <= 0) break;
      current = await this.getOnce(`/v1/orders/${encodeURIComponent(current.body.order.id)}`, deadline, signal);
    }
    return current.body.order;
  }

  /** One call, tried again on no answer, 5xx and 429 (same headers, same body, same key). */
  private async call<T>(c: Call): Promise<Answer<T>> {
    const url = `${this.baseUrl}${c.path}`;
    const payload = c.body === undefined ? undefined : JSON.stringify(c.body);
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= this.retry.attempts;
      let failure: CardpullError;
      let retryAfterMs: number | undefined;
      const got = await this.send(url, c, payload).catch((error: unknown) => {
        // The caller's own abort is an answer, not a failure to retry.
        if (c.signal?.aborted) throw c.signal.reason ?? error;
        const reason = error instanceof Error ? error.message : String(error);
        return new CardpullNetworkError({
          code: 'network_error',
          message: `No answer to ${c.method} ${this.baseUrl}${c.path.split('?')[0]} (try ${attempt} of ${this.retry.attempts}): ${reason}`,
          status: 0,
          idempotencyKey: c.idempotencyKey,
          cause: error,
        });
      });
      if (got instanceof CardpullError) failure = got;
      else {
        const body = parseBody(got.text);
        if (got.res.ok) return { status: got.res.status, body: body as T, headers: got.res.headers };
        const retryAfter = retryAfterSecondsOf(got.res.headers.get('retry-after'));
        failure = errorFromAnswer(got.res.status, body, { idempotencyKey: c.idempotencyKey, retryAfterSeconds: retryAfter });
        if (got.res.status !== 429 && got.res.status < 500) throw failure;
        if (retryAfter !== undefined) retryAfterMs = retryAfter * 1000;
      }
      if (last) throw failure;
      if (retryAfterMs !== undefined && retryAfterMs > this.retry.maxRetryAfterMs) throw failure;
      const backoff = Math.random() * Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
      await sleep(Math.max(backoff, retryAfterMs ?? 0), c.signal);
    }
  }

  /** One try: the answer and its whole body (a connection reset while reading it is a failed try too). */
  private async send(url: string, c: Call, payload: string | undefined): Promise<{ res: Response; text: string }> {
    const res = await this.fetchFn(url, {
      method: c.method,
      headers: {
        accept: 'application/json',
        authorization: `Bearer ${this.options.apiKey}`,
        'user-agent': `cardpull-client/${CLIENT_VERSION}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        ...c.headers,
      },
      body: payload,
      signal: withTimeout(c.signal, this.timeoutMs + (c.holdSeconds ?? 0) * 1000),
    });
    return { res, text: await res.text() };
  }
}

function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
function retryAfterSecondsOf(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The caller's signal (if any) and a timeout, as one signal. */
function withTimeout(signal: AbortSignal | undefined, ms: number): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  if (!signal) return timeout;
  const both = new AbortController();
  const abort = (s: AbortSignal) => () => both.abort(s.reason);
  if (signal.aborted) both.abort(signal.reason);
  signal.addEventListener('abort', abort(signal), { once: true, signal: both.signal });
  timeout.addEventListener('abort', abort(timeout), { once: true, signal: both.signal });
  return both.signal;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
