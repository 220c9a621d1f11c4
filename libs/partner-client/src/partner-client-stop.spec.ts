import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PartnerClient } from './partner-client';

/**
 * A send's `stop` signal (its caller's lease could not be kept): a call it cuts short is a timeout (sent, the
 * outcome unknown); a send it stopped before it went out never reaches the partner (not_connected).
 */
describe('PartnerClient: a send stopped by its caller', () => {
  let server: Server;
  let client: PartnerClient;
  const seen: IncomingMessage[] = [];

  beforeAll(async () => {
    // A partner that never answers a POST /cards (its answer held until the connection closes).
    server = createServer((req) => {
      seen.push(req);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    client = new PartnerClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', identifier: 'i', sharedKeyHex: '00'.repeat(32), signatureForm: 'example', timeoutMs: 60_000 });
  });
  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('stopped mid-call: abandoned long before its deadline, a timeout (the partner got it: the outcome is unknown)', async () => {
    const stop = new AbortController();
    const call = client.createCard('req-1', 'ACME', 1000, undefined, stop.signal);
    await waitUntil(() => seen.length === 1);
    stop.abort(new DOMException('the lease could not be kept', 'AbortError'));
    const out = await call;
    expect(out).toMatchObject({ kind: 'unknown', reason: 'timeout' });
    expect(seen.map((r) => r.headers['x-requestid'])).toEqual(['req-1']);
  });

  it('stopped before it went out: nothing reaches the partner (not_connected, the same ID may be sent again soon)', async () => {
    const stop = new AbortController();
    stop.abort(new DOMException('the lease ran out', 'AbortError'));
    const out = await client.createPullRequest('req-2', 'ACME', 1000, undefined, stop.signal);
    expect(out).toMatchObject({ kind: 'unknown', reason: 'not_connected' });
    // Give a stray request every chance to arrive: none does.
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual([]);
  });
});

async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}
