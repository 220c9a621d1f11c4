import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { OrderMetrics } from '@cardpull/ops';
import { Agent, request } from 'undici';
import { SERVICE_CONFIG, callbackRules, callbackUrlProblem, publicOnlyLookup, type ServiceConfig } from '@cardpull/config';
import { Vault } from '@cardpull/vault';
import { CALLBACK_HEADERS, type CallbackEventRow, CallbacksRepository, OrderReads, signCallback, toOrderView } from '@cardpull/orders';

export type DeliveryResult = { kind: 'done'; reason: string } | { kind: 'retry'; delayMs: number };

const MAX_BACKOFF_MS = 3_600_000;

/**
 * Delivers one callback event: POST the order to the client's URL, signed with the client's secret, with
 * an event id for deduplication. The card's code and PIN are included only for clients with cards:read.
 * Non-2xx or no answer: retried with exponential backoff (CALLBACK_BACKOFF_MS, doubling) until
 * CALLBACK_MAX_ATTEMPTS, then marked failed. Every attempt is recorded for the order's page.
 */
@Injectable()
export class CallbackDeliverer {
  private readonly log = new Logger(CallbackDeliverer.name);
  /**
   * Outside local runs, every connection's address is checked when it is made (publicOnlyLookup): a name
   * that resolves to a loopback, private or link-local address is refused. Redirects are never followed.
   */
  private readonly agent: Agent | undefined;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'CALLBACK_ALLOW_LOCAL' | 'CALLBACK_ALLOWED_HOSTS' | 'CALLBACK_BACKOFF_MS' | 'CALLBACK_MAX_ATTEMPTS' | 'CALLBACK_SECRETS' | 'CALLBACK_TIMEOUT_MS'>,
    private readonly callbacks: CallbacksRepository,
    private readonly orders: OrderReads,
    private readonly vault: Vault,
    @Optional() private readonly metrics?: OrderMetrics,
  ) {
    this.agent = config.CALLBACK_ALLOW_LOCAL ? undefined : new Agent({ connect: { lookup: publicOnlyLookup } });
  }

  async deliver(eventId: string): Promise<DeliveryResult> {
    const event = await this.callbacks.claim(eventId, this.config.CALLBACK_TIMEOUT_MS + 5_000);
    if (!event) {
      const current = await this.callbacks.find(eventId);
      return current?.state === 'pending' ? { kind: 'retry', delayMs: current.dueInMs } : { kind: 'done', reason: current?.state ?? 'gone' };
    }
    const secret = this.config.CALLBACK_SECRETS.get(event.client);
    // Checked again at delivery: the settings may have changed since intake (a URL refused now is never called).
    const refused = callbackUrlProblem(event.url, event.client, callbackRules(this.config));
    const started = performance.now();
    let httpStatus: number | null = null;
    let error: string | null = null;
    if (!secret || refused) {
      error = refused ? `callback refused: ${event.url} ${refused}` : `client ${event.client} has no CALLBACK_SECRETS entry`;
    } else {
      try {
        httpStatus = await this.post(event, secret);
        if (httpStatus < 200 || httpStatus >= 300) error = `HTTP ${httpStatus}`;
      } catch (e) {
        error = (e as Error).name === 'TimeoutError' ? `no answer within ${this.config.CALLBACK_TIMEOUT_MS} ms` : (e as Error).message;
      }
    }
    const ok = error === null;
    const giveUp = !ok && (event.attempts >= this.config.CALLBACK_MAX_ATTEMPTS || !secret || !!refused);
    const retryInMs = ok || giveUp ? null : Math.min(this.config.CALLBACK_BACKOFF_MS * 2 ** (event.attempts - 1), MAX_BACKOFF_MS);
    await this.callbacks.record(event.id, { ok, httpStatus, error, durationMs: performance.now() - started, retryInMs });
    const fields = { eventId: event.id, orderId: event.orderId, type: event.type, attempt: event.attempts, httpStatus, error };
    this.metrics?.callbackDeliveries.inc({ result: ok ? 'delivered' : giveUp ? 'given_up' : 'retry' });
    if (ok) this.log.log(fields, 'callback delivered');
    else if (giveUp) this.log.error(fields, 'callback given up');
    else this.log.warn({ ...fields, retryInMs }, 'callback failed; will retry');
    return retryInMs !== null ? { kind: 'retry', delayMs: retryInMs } : { kind: 'done', reason: ok ? 'delivered' : 'failed' };
  }

  private async body(event: CallbackEventRow): Promise<string> {
    const head = { id: event.id, type: event.type, created_at: event.createdAt.toISOString() };
    // An event about the account (balance.low): its payload as it was recorded.
    if (event.orderId === null) return JSON.stringify({ ...head, ...event.snapshot });
    const detail = await this.orders.detail(event.orderId);
    if (!detail) throw new Error('order not found');
    // The scope of the key that created the order, recorded with it: a write-only key of a client whose
    // other key reads cards must not receive the card through its own callback URL.
    const canReadCards = detail.order.callbackSecrets;
    return JSON.stringify({
      ...head,
      // The status the event announces; `order` is the order as it is now (it may have moved on).
      status: (event.snapshot as { status: string }).status,
      order: toOrderView(detail, this.vault, canReadCards),
    });
  }

  private async post(event: CallbackEventRow, secret: string): Promise<number> {
    const body = await this.body(event);
    const timestamp = Math.floor(Date.now() / 1000);
    const res = await request(event.url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'cardpull-callbacks/1',
        [CALLBACK_HEADERS.eventId]: event.id,
        [CALLBACK_HEADERS.eventType]: event.type,
        [CALLBACK_HEADERS.timestamp]: String(timestamp),
        [CALLBACK_HEADERS.signature]: signCallback(secret, timestamp, body),
      },
      signal: AbortSignal.timeout(this.config.CALLBACK_TIMEOUT_MS),
      dispatcher: this.agent,
      // undici's request follows no redirect: a 3xx is a failed delivery, never a call to another address.
    });
    await res.body.dump();
    return res.statusCode;
  }
}
