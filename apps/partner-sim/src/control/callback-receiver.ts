import { createHmac, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, Headers, HttpCode, Injectable, Logger, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LOCAL_CALLBACKS } from '@cardpull/config';
import { PartnerError } from '../common/partner-error';

/** How many received callbacks GET /_callbacks lists (the newest first). */
const KEPT = 50;
/** A callback's timestamp may be this far from our clock (cardpull's receivers are told to refuse older ones). */
const TOLERANCE_S = 300;

export interface ReceivedCallback {
  received_at: string;
  /** `valid`: signed with the local callback secret (LOCAL_CALLBACKS) within 5 minutes; else why not. */
  signature: 'valid' | 'invalid' | 'missing' | 'stale';
  event_id: string | null;
  event_type: string | null;
  /** The callback as sent (the Order resource in it carries the card for a client with cards:read). */
  event: unknown;
}

/**
 * The same check as cardpull's receivers make (README, Callbacks; libs/orders callback-signature.ts, which
 * this app may not import): `v1=` + hex HMAC-SHA256(secret, "<timestamp>.<raw body>"), in constant time.
 */
function signatureOf(secret: string, timestamp: unknown, body: string, signature: unknown, now = Date.now()): ReceivedCallback['signature'] {
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return 'missing';
  const ts = Number(timestamp);
  if (!Number.isInteger(ts) || Math.abs(now / 1000 - ts) > TOLERANCE_S) return 'stale';
  const expected = Buffer.from(`v1=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`);
  const actual = Buffer.from(signature);
  return expected.length === actual.length && timingSafeEqual(expected, actual) ? 'valid' : 'invalid';
}

/** The last callbacks received, newest first (cleared by POST /_sim/reset). */
@Injectable()
export class CallbackInbox {
  private readonly received: ReceivedCallback[] = [];

  add(callback: ReceivedCallback): void {
    this.received.unshift(callback);
    this.received.length = Math.min(this.received.length, KEPT);
  }

  list(): ReceivedCallback[] {
    return [...this.received];
  }

  clear(): void {
    this.received.length = 0;
  }
}

/**
 * A callback receiver for local runs (with the control API, SIM_CONTROL): under CARDPULL_PROFILE=local the
 * local client's callbacks come here by default (LOCAL_CALLBACKS). POST /_callbacks checks the signature
 * with the local callback secret, logs one line per callback and answers 204 (401 when the signature is
 * wrong or missing, so a misconfigured secret shows as failed deliveries); GET /_callbacks lists the last
 * 50, signed or not. It shows card codes: never expose it where strangers can reach it.
 */
@Controller('_callbacks')
export class CallbackReceiverController {
  private readonly log = new Logger('Callbacks');

  constructor(private readonly inbox: CallbackInbox) {}

  @Post()
  @HttpCode(204)
  receive(
    @Req() req: FastifyRequest,
    @Headers('x-cardpull-timestamp') timestamp: unknown,
    @Headers('x-cardpull-signature') signature: unknown,
    @Headers('x-cardpull-event-id') eventId: unknown,
    @Headers('x-cardpull-event-type') eventType: unknown,
  ): void {
    const body = req.sim.body;
    const event = body.kind === 'json' ? body.value : body.kind === 'invalid' ? body.raw : null;
    const verdict = signatureOf(LOCAL_CALLBACKS.secret, timestamp, req.sim.rawBody ?? '', signature);
    const callback: ReceivedCallback = {
      received_at: new Date().toISOString(),
      signature: verdict,
      event_id: typeof eventId === 'string' ? eventId : null,
      event_type: typeof eventType === 'string' ? eventType : null,
      event,
    };
    this.inbox.add(callback);
    const order = (event as { order?: { id?: unknown; status?: unknown } } | null)?.order;
    this.log.log(
      { callback: { event_id: callback.event_id, type: callback.event_type, order_id: order?.id ?? null, status: order?.status ?? null, signature: verdict } },
      `callback ${callback.event_type ?? '(no type)'} for order ${String(order?.id ?? '?')} (${String(order?.status ?? '?')}), signature ${verdict}`,
    );
    if (verdict !== 'valid') {
      throw new PartnerError(401, 'invalid_signature', `Callback signature ${verdict}: expected v1=HMAC-SHA256 with the local callback secret over "<X-Cardpull-Timestamp>.<raw body>"`);
    }
  }

  @Get()
  @Header('cache-control', 'no-store')
  list(): { callbacks: ReceivedCallback[] } {
    return { callbacks: this.inbox.list() };
  }
}
