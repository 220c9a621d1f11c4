import { connect } from 'node:net';
import { Readable } from 'node:stream';
import * as fc from 'fast-check';
import { Pool } from 'undici';
import { KEYS, idemKey } from '../../support/stack';

/**
 * One hostile request to POST /v1/orders, invalid by construction: `rule` names the rule it breaks,
 * `expect` what the API must answer. Headers left undefined get their valid value at send time (a fresh
 * Idempotency-Key, the shop's key, application/json), so each probe breaks exactly what it says.
 */
export interface Probe {
  rule: string;
  /** undefined: a fresh valid key; null: the header is not sent. */
  idempotencyKey?: string | null;
  authorization?: string | null;
  contentType?: string | null;
  body?: string | Buffer;
  /** Send the body as a chunked stream of this many bytes of `body` repeated (no Content-Length). */
  chunkedBytes?: number;
  /** The whole request as bytes, for what an HTTP client refuses to send (CR/LF/NUL in headers, bad framing). */
  raw?: Buffer;
  expect: Expect;
}

export interface Expect {
  statuses: readonly number[];
  /** Envelope codes accepted. */
  codes?: readonly string[];
  /**
   * Node's HTTP parser may refuse the bytes itself, before any route: the service's clientErrorHandler
   * (libs/logger createFastifyAdapter) answers those in the envelope too, with these codes.
   */
  parserRefusal?: boolean;
}

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** Builds a probe; its printed form (fast-check counterexamples) is short even for megabyte bodies. */
export function probe(p: Probe): Probe {
  return Object.assign(p, { [fc.toStringMethod]: () => describeProbe(p) });
}

const excerpt = (s: string, n = 160) => JSON.stringify(s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);

export function describeProbe(p: Probe): string {
  const parts = [`rule=${p.rule}`];
  for (const h of ['idempotencyKey', 'authorization', 'contentType'] as const) if (p[h] !== undefined) parts.push(`${h}=${p[h] === null ? 'none' : excerpt(p[h]!)}`);
  if (p.raw) parts.push(`raw=${excerpt(p.raw.toString('latin1'), 400)}`);
  else if (p.body !== undefined) parts.push(`body=${excerpt(typeof p.body === 'string' ? p.body : p.body.toString('latin1'))}`);
  if (p.chunkedBytes) parts.push(`chunked=${p.chunkedBytes}B`);
  return `{${parts.join(' ')}}`;
}

/** Codes of the envelope written when Node's HTTP parser refuses the bytes (bad header characters, framing, size). */
export const PARSER_REFUSAL_CODES = ['malformed_request', 'headers_too_large'] as const;

export function isNodeParserRefusal(a: Answer): boolean {
  try {
    return (PARSER_REFUSAL_CODES as readonly string[]).includes(JSON.parse(a.text)?.errors?.[0]?.code);
  } catch {
    return false;
  }
}

/** The envelope `{ errors: [{ code, message }], status }` with a non-empty code and message, or why not. */
export function envelopeProblem(a: Answer, codes?: readonly string[]): string | null {
  if (!/^application\/json/i.test(a.contentType)) return `content-type ${a.contentType || '(none)'}`;
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    return 'body is not JSON';
  }
  const e = body?.errors?.[0];
  if (!Array.isArray(body?.errors) || typeof body.status !== 'string' || !body.status) return 'not the envelope';
  if (typeof e?.code !== 'string' || !e.code || typeof e.message !== 'string' || !e.message) return 'empty code or message';
  if (codes && !codes.includes(e.code)) return `code ${e.code}, expected one of ${codes.join('|')}`;
  return null;
}

/** Why an answer breaks the intake's contract for a probe, or null. */
export function answerProblem(p: Probe, a: Answer): string | null {
  if (a.status < 400 || a.status > 499) return `status ${a.status} (must be 4xx)`;
  if (!p.expect.statuses.includes(a.status)) return `status ${a.status}, expected ${p.expect.statuses.join('|')}`;
  const codes = p.expect.parserRefusal ? [...(p.expect.codes ?? []), ...PARSER_REFUSAL_CODES] : p.expect.codes;
  // A parser refusal with no expected codes of its own accepts only the parser's codes.
  return envelopeProblem(a, p.expect.parserRefusal && !p.expect.codes ? PARSER_REFUSAL_CODES : codes);
}

/** Counts every request actually sent and every status answered. */
export class Tally {
  sent = 0;
  readonly statuses = new Map<string, number>();
  readonly startedAt = Date.now();
  count(status: number | string) {
    this.sent++;
    const key = String(status);
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
  }
  report(): string {
    const histogram = [...this.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}: ${n}`).join(', ');
    return `fuzzed POST /v1/orders: ${this.sent} requests in ${((Date.now() - this.startedAt) / 1000).toFixed(1)} s; statuses { ${histogram} }`;
  }
}

/** Sends probes over a keep-alive pool (or a raw socket where the pool cannot) and checks every answer. */
export class Prober {
  private readonly pool: Pool;
  private readonly url: URL;

  constructor(
    apiUrl: string,
    readonly tally: Tally,
  ) {
    this.url = new URL(apiUrl);
    this.pool = new Pool(apiUrl, { connections: 16, headersTimeout: 20_000, bodyTimeout: 20_000 });
  }

  async send(p: Probe): Promise<Answer> {
    try {
      const answer = p.raw ? await this.sendRaw(p.raw) : await this.sendPooled(p);
      this.tally.count(isNodeParserRefusal(answer) ? `${answer.status} (refused by Node's HTTP parser)` : answer.status);
      return answer;
    } catch (error) {
      this.tally.count('no answer');
      throw new Error(`no answer to ${describeProbe(p)}: ${(error as Error).message}`);
    }
  }

  /** Sends a batch `concurrency` at a time; throws with every probe whose answer broke the contract. */
  async sendAll(probes: readonly Probe[], concurrency = 12): Promise<void> {
    const failures: string[] = [];
    let next = 0;
    const lane = async () => {
      while (next < probes.length) {
        const p = probes[next++]!;
        try {
          const a = await this.send(p);
          const problem = answerProblem(p, a);
          if (problem) failures.push(`${problem}: ${describeProbe(p)} -> ${a.status} ${a.text.slice(0, 300)}`);
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, probes.length) }, lane));
    if (failures.length) throw new Error(`${failures.length} of ${probes.length} probes broke the contract:\n${failures.slice(0, 5).join('\n')}`);
  }

  private async sendPooled(p: Probe): Promise<Answer> {
    const headers: Record<string, string> = {};
    const authorization = p.authorization === undefined ? `Bearer ${KEYS.shop}` : p.authorization;
    const contentType = p.contentType === undefined ? 'application/json' : p.contentType;
    const key = p.idempotencyKey === undefined ? idemKey('fuzz') : p.idempotencyKey;
    if (authorization !== null) headers.authorization = authorization;
    if (contentType !== null) headers['content-type'] = contentType;
    if (key !== null) headers['idempotency-key'] = key;
    const body = p.chunkedBytes ? chunked(p.body ?? 'x', p.chunkedBytes) : p.body;
    const res = await this.pool.request({ path: '/v1/orders', method: 'POST', headers, body });
    const text = await res.body.text();
    return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text };
  }

  /** One request per connection, written at once and half-closed; the answer is read to the end. */
  private sendRaw(bytes: Buffer): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(Number(this.url.port), this.url.hostname, () => socket.end(bytes));
      const timer = setTimeout(() => socket.destroy(new Error('no answer within 10 s')), 10_000);
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', (e) => (chunks.length ? undefined : (clearTimeout(timer), reject(e))));
      socket.on('close', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        const head = end < 0 ? text : text.slice(0, end);
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
        if (!status) return reject(new Error(`not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
        const contentType = /^content-type:\s*(.*)$/im.exec(head)?.[1] ?? '';
        // Only the first answer: a request whose framing was broken may be followed by another one.
        const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? NaN);
        const body = Buffer.from(text.slice(end + 4), 'latin1');
        resolve({ status: Number(status[1]), contentType, text: (Number.isNaN(length) ? body : body.subarray(0, length)).toString('utf8') });
      });
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** `bytes` bytes of `seed` repeated, streamed in 64 KiB chunks (so undici sends Transfer-Encoding: chunked). */
function chunked(seed: string | Buffer, bytes: number): Readable {
  const unit = Buffer.from(seed);
  const block = Buffer.alloc(64 * 1024, unit.length ? unit : Buffer.from('x'));
  let left = bytes;
  return Readable.from(
    (function* () {
      while (left > 0) {
        const n = Math.min(left, block.length);
        left -= n;
        yield block.subarray(0, n);
      }
    })(),
  );
}

/** A whole HTTP/1.1 request as bytes: the given header lines (already terminated) and a body. */
export function rawRequest(headerBytes: Buffer, body: string, opts: { contentLength?: string | null } = {}): Buffer {
  const b = Buffer.from(body);
  const length = opts.contentLength === undefined ? String(b.length) : opts.contentLength;
  return Buffer.concat([
    Buffer.from(`POST /v1/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEYS.shop}\r\nContent-Type: application/json\r\nConnection: close\r\n`),
    headerBytes,
    Buffer.from(length === null ? '' : `Content-Length: ${length}\r\n`),
    Buffer.from('\r\n'),
    b,
  ]);
}
