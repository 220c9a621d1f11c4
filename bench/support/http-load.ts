import autocannon from 'autocannon';
import { Pool } from 'undici';
import { percentile } from './report';

/**
 * The intake's load: valid FAST-FREE orders (the simulator's free-amount card, unlimited stock), each with
 * a unique Idempotency-Key, from the bench process.
 */

export type Mode = 'sync' | 'async';

let keySeq = 0;
/** A unique Idempotency-Key (visible ASCII, no spaces: the API refuses anything else with a 400). */
const newKey = (prefix: string) => `${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}-${process.pid}-${Date.now().toString(36)}-${++keySeq}`;
export const orderBody = (mode: Mode) => JSON.stringify({ gift_card_code: 'FAST-FREE', amount: 100 + Math.floor(Math.random() * 9_901), mode });

/** A run where the API refused orders measures something else: stop the bench (more than 0.1 % refused). */
function refuseFailures(what: string, accepted: number, failed: number, detail: Record<string, number>): void {
  if (failed > 0.001 * (accepted + failed)) throw new Error(`${what}: ${failed} of ${accepted + failed} orders not accepted (${JSON.stringify(detail)})`);
}

export interface PeakResult {
  /** 202 answers per second over the run. */
  acceptedPerS: number;
  accepted: number;
  /** Anything else than 202 (status -> count), and transport errors. */
  other: Record<string, number>;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  seconds: number;
}

/** Closed loop: `connections` connections each POSTing as fast as answers come (autocannon). */
export async function intakePeak(opts: { url: string; apiKey: string; connections: number; seconds: number; mode?: Mode; prefix: string }): Promise<PeakResult> {
  const headers = { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json' };
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.seconds,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/v1/orders',
        setupRequest: (req) => ({ ...req, headers: { ...headers, 'idempotency-key': newKey(opts.prefix) }, body: orderBody(opts.mode ?? 'sync') }),
      },
    ],
  });
  const accepted = result.statusCodeStats['202']?.count ?? 0;
  const other = Object.fromEntries(Object.entries(result.statusCodeStats).filter(([s]) => s !== '202').map(([s, v]) => [s, v.count]));
  refuseFailures('closed-loop intake', accepted, Object.values(other).reduce((a, b) => a + b, 0) + result.errors, other);
  return { acceptedPerS: accepted / result.duration, accepted, other, errors: result.errors, p50Ms: result.latency.p50, p99Ms: result.latency.p99, seconds: result.duration };
}

export interface PacedResult {
  targetRate: number;
  achievedRate: number;
  sent: number;
  accepted: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * Open loop at a fixed rate, evenly spaced (autocannon's overallRate sends each connection's share of a
 * second in one burst at the start of the second, which measures latency under bursts of full load, not at
 * the rate). Latency counts from when a request was due, so a stalled server is not hidden (coordinated
 * omission): requests wait in the pool's queue when all connections are busy.
 */
export async function pacedIntake(opts: { url: string; apiKey: string; rate: number; seconds: number; connections: number; prefix: string }): Promise<PacedResult> {
  const pool = new Pool(opts.url, { connections: opts.connections, pipelining: 1 });
  const latencies: number[] = [];
  let accepted = 0;
  let failed = 0;
  const statuses: Record<string, number> = {};
  const total = Math.round(opts.rate * opts.seconds);
  const start = performance.now() + 50;
  const inflight: Promise<void>[] = [];
  const send = async (due: number) => {
    try {
      const res = await pool.request({
        method: 'POST',
        path: '/v1/orders',
        headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json', 'idempotency-key': newKey(opts.prefix) },
        body: orderBody('sync'),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      await res.body.dump();
      if (res.statusCode === 202) accepted++;
      else {
        failed++;
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      }
    } catch {
      failed++;
      statuses.error = (statuses.error ?? 0) + 1;
    }
    latencies.push(performance.now() - due);
  };
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / opts.rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(send(due));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  refuseFailures('paced intake', accepted, failed, statuses);
  return {
    targetRate: opts.rate,
    achievedRate: accepted / elapsed,
    sent: total,
    accepted,
    failed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: Math.max(...latencies),
  };
}

/** Creates `count` orders through the API (`concurrency` at a time); answers their ids. Fails on any refusal. */
export async function createOrders(opts: { url: string; apiKey: string; count: number; mode: Mode; concurrency?: number; prefix: string }): Promise<string[]> {
  const pool = new Pool(opts.url, { connections: opts.concurrency ?? 16 });
  const ids: string[] = [];
  let next = 0;
  const loop = async () => {
    while (next < opts.count) {
      next++;
      const key = newKey(opts.prefix);
      const res = await pool.request({
        method: 'POST',
        path: '/v1/orders',
        headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: orderBody(opts.mode),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 202) throw new Error(`POST /v1/orders answered ${res.statusCode}: ${text.slice(0, 300)}`);
      ids.push((JSON.parse(text) as { order: { id: string } }).order.id);
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, loop));
  } finally {
    await pool.close();
  }
  return ids;
}
