import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: any;
}

/**
 * A caller's HTTP endpoint on 127.0.0.1 (callback receivers, and servers that must never be called): records
 * every request and counts every connection; answers with the next status of `script` (then 200).
 */
export async function startReceiver() {
  const received: Received[] = [];
  const script: number[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      received.push({ path: req.url ?? '', headers: req.headers, body, json });
      res.statusCode = script.shift() ?? 200;
      res.end();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    script,
    hits: () => ({ connections, requests: received.length }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
