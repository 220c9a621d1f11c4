import { request } from 'undici';
import { LOCAL_DEFAULTS } from '@cardpull/config';
import {
  formatAuthorization,
  hmacHex,
  signaturePayload,
  signingToken,
  type SignatureForm,
} from '@cardpull/partner-client';
import type { GiftCard, Inventory } from '@cardpull/partner-client';
import type { SimGiftCardChange, SimGiftCardInput } from '@cardpull/sim-contract';
import type { Fault, FaultSpecInput, LedgerView, SimClockInput, SimClockView, SimLimitsInput, SimLimitsView, SimReadings, SimReadingsInput, SimStateView } from '@cardpull/sim-contract';

export type { Fault, FaultSpecInput, LedgerView, SimStateView };

export interface SimResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or the text when the body is not JSON. */
  body: T;
  text: string;
}

export interface SignedRequestOptions {
  method: string;
  /** Path under the base URL, e.g. /partners/v1/balance. */
  path: string;
  /** Sent as JSON; a string is sent as is (and signed lowercased, as the simulator reads a non-JSON body). */
  body?: unknown;
  headers?: Record<string, string>;
  apiKey?: string;
  identifier?: string;
  sharedKeyHex?: string;
  /** Token form: `example` (with the identifier, the default) or `formula`. */
  form?: SignatureForm;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  /** GET only: leave the empty payload part out of the token. */
  omitEmptyPayload?: boolean;
  /** Client timeout for the response headers. */
  timeoutMs?: number;
}

/** One request signed the partner's way (credentials default to the simulator's local defaults). */
export async function signedRequest<T = unknown>(baseUrl: string, opts: SignedRequestOptions): Promise<SimResponse<T>> {
  const identifier = opts.identifier ?? LOCAL_DEFAULTS.PARTNER_IDENTIFIER;
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const text = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const payload = typeof opts.body === 'string' ? opts.body.toLowerCase() : signaturePayload(opts.body);
  const url = `${baseUrl.replace(/\/$/, '')}${opts.path}`;
  const token = signingToken({
    method: opts.method,
    url,
    payload,
    identifier,
    timestamp,
    form: opts.form ?? 'example',
    omitEmptyPayload: opts.omitEmptyPayload,
  });
  const authorization = formatAuthorization({
    apiKey: opts.apiKey ?? LOCAL_DEFAULTS.PARTNER_API_KEY,
    identifier,
    signature: hmacHex(token, opts.sharedKeyHex ?? LOCAL_DEFAULTS.PARTNER_SHARED_KEY),
    timestamp: String(timestamp),
  });
  return sendRequest<T>(url, {
    method: opts.method,
    body: text,
    headers: {
      authorization,
      accept: 'application/json',
      ...(text === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    },
    timeoutMs: opts.timeoutMs,
  });
}

/** One HTTP request as given (no signing added), its answer read whole: JSON parsed, or the text. */
export async function sendRequest<T = unknown>(
  url: string,
  opts: { method: string; body?: string; headers?: Record<string, string>; timeoutMs?: number },
): Promise<SimResponse<T>> {
  const res = await request(url, {
    method: opts.method as 'GET',
    body: opts.body,
    headers: opts.headers,
    ...(opts.timeoutMs === undefined ? {} : { headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs }),
  });
  const text = await res.body.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON (an injected error page): keep the text.
  }
  return { status: res.statusCode, headers: res.headers, body: body as T, text };
}

/** Typed client of the simulator's control API (/_sim, SIM_CONTROL=true). Throws on any non-2xx answer. */
export class SimControl {
  constructor(private readonly baseUrl: string) {}

  async reset(): Promise<void> {
    await this.call('POST', '/_sim/reset');
  }

  /** Balance in currency units (the Balance resource's amount). */
  async setBalance(amount: number): Promise<void> {
    await this.call('PUT', '/_sim/balance', { amount });
  }

  /** A charge without a card (currency units): the balance drops and nothing else changes. */
  async charge(amount: number, reason?: string): Promise<{ balance: { amount: number } }> {
    return this.call('POST', '/_sim/charge', { amount, ...(reason === undefined ? {} : { reason }) });
  }

  /** Quantity of one facial value, of every amount of a fixed gift card (no facialValue), or 'unlimited'. */
  setStock(giftCardCode: string, quantity: number | 'unlimited', facialValue?: number): Promise<Inventory> {
    return this.call('PUT', '/_sim/stock', {
      gift_card_code: giftCardCode,
      quantity,
      ...(facialValue === undefined ? {} : { facial_value: facialValue }),
    });
  }

  async addFault(spec: FaultSpecInput): Promise<string> {
    return (await this.call<{ id: string }>('POST', '/_sim/faults', spec)).id;
  }

  /** PUT /_sim/limits: the partner's rate limits until the next reset. */
  async setLimits(limits: SimLimitsInput): Promise<SimLimitsView> {
    return this.call<SimLimitsView>('PUT', '/_sim/limits', limits);
  }

  async limits(): Promise<SimLimitsView> {
    return this.call<SimLimitsView>('GET', '/_sim/limits');
  }

  /** PUT /_sim/clock: the partner's clock offset, Timestamp window and stale-Timestamp code, until the next reset. */
  setClock(clock: SimClockInput): Promise<SimClockView> {
    return this.call<SimClockView>('PUT', '/_sim/clock', clock);
  }

  clock(): Promise<SimClockView> {
    return this.call<SimClockView>('GET', '/_sim/clock');
  }

  /** PUT /_sim/readings: the shapes of the partner's answers on the spec's silent points, until the next reset. */
  setReadings(readings: SimReadingsInput): Promise<SimReadings> {
    return this.call<SimReadings>('PUT', '/_sim/readings', readings);
  }

  /** POST /_sim/catalog/gift-cards: a gift card the catalog lists from now on (until the next reset). */
  addGiftCard(giftCard: SimGiftCardInput): Promise<GiftCard> {
    return this.call<GiftCard>('POST', '/_sim/catalog/gift-cards', giftCard);
  }

  /** PATCH /_sim/catalog/gift-cards/:code: its face values, PIN, discount, scheduled discounts or name. */
  changeGiftCard(code: string, change: SimGiftCardChange): Promise<GiftCard> {
    return this.call<GiftCard>('PATCH', `/_sim/catalog/gift-cards/${encodeURIComponent(code)}`, change);
  }

  /** DELETE /_sim/catalog/gift-cards/:code: the catalog no longer lists it. */
  async removeGiftCard(code: string): Promise<void> {
    await this.call('DELETE', `/_sim/catalog/gift-cards/${encodeURIComponent(code)}`);
  }

  async faults(): Promise<Fault[]> {
    return (await this.call<{ faults: Fault[] }>('GET', '/_sim/faults')).faults;
  }

  async removeFault(id: string): Promise<void> {
    await this.call('DELETE', `/_sim/faults/${encodeURIComponent(id)}`);
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/_sim/faults');
  }

  /** Every partner request received and every card issued (at or after `since`, when given). */
  ledger(since?: string | Date): Promise<LedgerView> {
    const query = since === undefined ? '' : `?since=${encodeURIComponent(new Date(since).toISOString())}`;
    return this.call('GET', `/_sim/ledger${query}`);
  }

  state(): Promise<SimStateView> {
    return this.call('GET', '/_sim/state');
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await sendRequest<T>(`${this.baseUrl}${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });
    if (res.status < 200 || res.status >= 300) {
      throw new Error(`simulator control ${method} ${path} answered ${res.status}: ${res.text}`);
    }
    return res.body;
  }
}
