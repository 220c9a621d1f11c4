import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/**
 * What the front does with the next request:
 *  - `forward`: passes it to the API and its answer back;
 *  - `lose-answer`: passes it to the API, waits for the whole answer, then cuts the caller's connection without
 *    a byte (the API did the work; the caller never hears of it: a timeout, a crash of a load balancer);
 *  - `503`: answers 503 with an HTML page and `Retry-After: 0` without calling the API (a load balancer with
 *    no instance up);
 *  - `reset`: cuts the connection without calling the API.
 */
export type FrontAction = 'forward' | 'lose-answer' | '503' | 'reset';

export interface FrontRecord {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  action: FrontAction;
  /** The API's status when the request reached it. */
  apiStatus?: number;
}

/**
 * A real HTTP front (reverse proxy) between the client and the real API, which fails requests as scripted:
 * the network faults a client meets in production, while every request that goes through is the API's.
 */
export async function startFront(apiUrl: string) {
  const script: FrontAction[] = [];
  const seen: FrontRecord[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const action = script.shift() ?? 'forward';
      const record: FrontRecord = { method: req.method ?? '', path: req.url ?? '', idempotencyKey: req.headers['idempotency-key'] as string | undefined, action };
      seen.push(record);
      if (action === 'reset') return void req.socket.destroy();
      if (action === '503') {
        res.writeHead(503, { 'content-type': 'text/html', 'retry-after': '0' });
        return void res.end('<html><body>503 Service Unavailable</body></html>');
      }
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      void request(`${apiUrl}${req.url}`, { method: req.method as 'GET', headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        .then(async (up) => {
          const body = Buffer.from(await up.body.arrayBuffer());
          record.apiStatus = up.statusCode;
          if (action === 'lose-answer') return void req.socket.destroy();
          const out: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !['connection', 'keep-alive', 'transfer-encoding'].includes(k)) out[k] = v;
          res.writeHead(up.statusCode, out);
          res.end(body);
        })
        .catch(() => req.socket.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    script,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The global fetch, recording each request's method, path and status (or the failure): what the client really sent. */
export function recordingFetch() {
  const calls: { method: string; path: string; status: number | 'failed' }[] = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const entry = { method: init?.method ?? 'GET', path: `${url.pathname}${url.search}`, status: 'failed' as number | 'failed' };
    calls.push(entry);
    const res = await fetch(input, init);
    entry.status = res.status;
    return res;
  };
  return { calls, fetch: fetchFn };
}
