import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { request } from 'undici';
import { KEYS, type Stack } from '../support/stack';

/** Base URL of an app started by a stack (the worker listens on an ephemeral WORKER_PORT in tests). */
export const urlOf = (app: NestFastifyApplication): string => `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
export const workerUrl = (stack: Stack): string => urlOf(stack.worker!);

/** A GET, without credentials (a probe) or with an Authorization header (Prometheus' key, a docs reader). */
export async function get(url: string, authorization?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string; body: any }> {
  const res = await request(url, { headers: authorization ? { authorization } : {} });
  const text = await res.body.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, headers: res.headers, text, body };
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format -> samples by metric name (histograms as their _bucket/_sum/_count series). */
export function parseMetrics(text: string): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
    out.set(m[1]!, [...(out.get(m[1]!) ?? []), { labels, value: Number(m[3]) }]);
  }
  return out;
}

/** The stack's shop key has every scope, metrics:read included. */
export const SCRAPER = `Bearer ${KEYS.shop}`;

export async function scrape(baseUrl: string): Promise<{ text: string; samples: Map<string, Sample[]>; contentType: unknown }> {
  const res = await get(`${baseUrl}/metrics`, SCRAPER);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${res.text.slice(0, 300)}`);
  return { text: res.text, samples: parseMetrics(res.text), contentType: res.headers['content-type'] };
}

/** The value of one series (labels must all match), or undefined when the series is absent. */
export function valueOf(samples: Map<string, Sample[]>, name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.get(name)?.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
