import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { PartnerClock, RESIGN_THRESHOLD_MS, formatAuthorization, hmacHex, retryAfterMs, signaturePayload, signingToken, type SignatureForm } from '@cardpull/partner-client';

/** What the probe sends with: the partner's credentials, as the service would. */
export interface ProbeCredentials {
  baseUrl: string;
  apiKey: string;
  identifier: string;
  sharedKeyHex: string;
}

export interface ProbeSend {
  /** A label of the endpoint, for the latency table (`GET /balance`). */
  endpoint: string;
  method: 'GET' | 'POST';
  /** Under /partners/v1. */
  path: string;
  body?: unknown;
  /** Sent as X-RequestId. */
  requestId?: string;
  form: SignatureForm;
  /** Seconds added to the partner's time in the Timestamp (the clock-window point). */
  shiftS?: number;
  /** Why the call is made, kept with its evidence. */
  purpose: string;
  /** The burst: a refusal for the rate is the finding, not something to wait out. */
  noRetry?: boolean;
}

/** A 429 or 503 is waited out (its Retry-After, else 1 s, at most 10 s) and sent again, at most twice: every probe call is safe to repeat. */
const LIMITED_RETRIES = 2;
const LIMITED_WAIT_MAX_MS = 10_000;

/** One answer, as the probe keeps it: never a card's code or PIN (the body is only read, never stored). */
export interface ProbeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  durationMs: number;
}

/** A call as the profile's evidence shows it. */
export interface ProbeEvidence {
  call: string;
  purpose: string;
  status: number | null;
  code?: string;
  retry_after?: string;
  request_id?: string;
  form?: SignatureForm;
  timestamp_shift_s?: number;
  error?: string;
}

/** The probe asked for more calls than it may make: it stops there. */
export class ProbeCapReached extends Error {}

/**
 * The probe's own signed HTTP calls. It cannot use PartnerClient: the probe must send what the service
 * never would (the other signature form, a Timestamp off by minutes, bodies that are wrong on purpose) and
 * read answers raw (status, headers, envelope) rather than classified. Every request is signed with the
 * partner's time as its Date headers show it (as the service signs), plus `shiftS` when asked. Calls are
 * counted against `maxCalls`: the probe is bounded whatever the partner answers.
 */
export class ProbeTransport {
  readonly clock = new PartnerClock();
  readonly durations = new Map<string, number[]>();
  private sent = 0;
  /** Readings of Date against our clock (ms): present only when answers carry a Date. */
  readonly dateReadings: number[] = [];

  constructor(
    private readonly credentials: ProbeCredentials,
    private readonly timeoutMs: number,
    readonly maxCalls: number,
  ) {}

  get calls(): number {
    return this.sent;
  }

  async send(s: ProbeSend): Promise<ProbeAnswer> {
    let resigned = false;
    for (let tries = 0; ; tries++) {
      const signedWith = this.clock.offsetMs();
      const answer = await this.sendOnce(s);
      // As the service does (ARCHITECTURE.md, "Partner time"): a 401 whose Date shows the time we signed with
      // was off is sent again once with the partner's time, before it counts as a refusal.
      const reading = this.clock.reading(answer.headers.date, answer.receivedAt);
      if (answer.status === 401 && !resigned && reading !== undefined && Math.abs(reading - signedWith) > RESIGN_THRESHOLD_MS) {
        this.clock.restartFrom(reading);
        resigned = true;
        continue;
      }
      if (s.noRetry || tries >= LIMITED_RETRIES || (answer.status !== 429 && answer.status !== 503)) return answer;
      const wait = retryAfterMs(header(answer, 'retry-after'), answer.headers.date) ?? 1000;
      await new Promise((r) => setTimeout(r, Math.min(Math.max(wait, 100), LIMITED_WAIT_MAX_MS)));
    }
  }

  private async sendOnce(s: ProbeSend): Promise<ProbeAnswer & { receivedAt: number }> {
    if (this.sent >= this.maxCalls) throw new ProbeCapReached(`the probe's cap of ${this.maxCalls} partner calls was reached`);
    this.sent += 1;
    const url = `${this.credentials.baseUrl.replace(/\/+$/, '')}/partners/v1${s.path}`;
    const text = s.body === undefined ? undefined : JSON.stringify(s.body);
    const timestamp = Math.floor(this.clock.now() / 1000) + (s.shiftS ?? 0);
    const token = signingToken({ method: s.method, url, payload: signaturePayload(s.body), identifier: this.credentials.identifier, timestamp, form: s.form });
    const authorization = formatAuthorization({
      apiKey: this.credentials.apiKey,
      identifier: this.credentials.identifier,
      signature: hmacHex(token, this.credentials.sharedKeyHex),
      timestamp: String(timestamp),
    });
    const started = performance.now();
    const res = await request(url, {
      method: s.method,
      body: text,
      headers: {
        authorization,
        accept: 'application/json',
        ...(text === undefined ? {} : { 'content-type': 'application/json' }),
        ...(s.requestId ? { 'x-requestid': s.requestId } : {}),
      },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const receivedAt = Date.now();
    const raw = await res.body.text();
    const durationMs = performance.now() - started;
    const reading = this.clock.observe(res.headers.date, receivedAt);
    if (reading !== undefined) this.dateReadings.push(reading);
    const list = this.durations.get(s.endpoint) ?? [];
    list.push(durationMs);
    this.durations.set(s.endpoint, list);
    let body: unknown = raw;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      // Not JSON (a proxy's page): kept as text.
    }
    return { status: res.statusCode, headers: res.headers, body, durationMs, receivedAt };
  }

  /** Sends, and on a transport failure answers null with the error kept in the evidence. */
  async trySend(s: ProbeSend): Promise<{ answer: ProbeAnswer | null; evidence: ProbeEvidence }> {
    try {
      const answer = await this.send(s);
      return { answer, evidence: evidenceOf(s, answer) };
    } catch (error) {
      if (error instanceof ProbeCapReached) throw error;
      return { answer: null, evidence: { ...evidenceBase(s), status: null, error: (error as Error).message } };
    }
  }

  /** Per endpoint: calls and latency (p50, p95), in ms. */
  latency(): Record<string, { calls: number; p50_ms: number; p95_ms: number }> {
    return Object.fromEntries(
      [...this.durations].map(([endpoint, list]) => {
        const sorted = [...list].sort((a, b) => a - b);
        const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;
        return [endpoint, { calls: list.length, p50_ms: at(0.5), p95_ms: at(0.95) }];
      }),
    );
  }
}

/** A request ID of the probe's own, for calls that cannot make a card (their bodies are refused by construction). */
export const probeRequestId = (): string => `probe-${randomUUID()}`;

/** The first error code of the spec's envelope, if the body is one. */
export function errorCode(body: unknown): string | undefined {
  const errors = (body as { errors?: unknown } | undefined)?.errors;
  if (!Array.isArray(errors)) return undefined;
  const code = (errors[0] as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether the body is the spec's error envelope: `{"errors": [{"code", "message"}], "status"}`. */
export function isEnvelope(body: unknown): boolean {
  const b = body as { errors?: unknown; status?: unknown } | undefined;
  return Array.isArray(b?.errors) && b.errors.length > 0 && b.errors.every((e) => typeof (e as { code?: unknown }).code === 'string' && typeof (e as { message?: unknown }).message === 'string') && typeof b.status === 'string';
}

export function header(answer: ProbeAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function evidenceBase(s: ProbeSend): ProbeEvidence {
  return {
    call: `${s.method} ${s.path}`,
    purpose: s.purpose,
    status: null,
    ...(s.requestId ? { request_id: s.requestId } : {}),
    form: s.form,
    ...(s.shiftS ? { timestamp_shift_s: s.shiftS } : {}),
  };
}

function evidenceOf(s: ProbeSend, answer: ProbeAnswer): ProbeEvidence {
  const code = errorCode(answer.body);
  const retryAfter = header(answer, 'retry-after');
  return { ...evidenceBase(s), status: answer.status, ...(code ? { code } : {}), ...(retryAfter ? { retry_after: retryAfter } : {}) };
}
