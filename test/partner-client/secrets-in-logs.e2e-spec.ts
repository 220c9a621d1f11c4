import { randomBytes, randomUUID } from 'node:crypto';
import type { Card, PartnerClient } from '@cardpull/partner-client';
import { startSimulator, type SimHandle } from '../support/simulator';
import { cardsIssued, clientFor, closeClients, pollUntilFinished, valueOf } from './support/client';
import { authorizationHeaders, startTcpProxy, type TcpProxy } from './support/tcp-proxy';

// docs/SECURITY.md: structured logs, secrets redacted. The client's own logs (its `logger`
// option) never carry a card code, a PIN, the shared key, the API key or the Authorization header, whatever
// the outcome. The headers actually sent are read off the wire (a TCP relay) to be looked for in the logs.

// Credentials of this file only, so that finding them in a log cannot be a coincidence.
const API_KEY = `api-key-${randomBytes(8).toString('hex')}`;
const SHARED_KEY = randomBytes(32).toString('hex');
const WRONG_SHARED_KEY = randomBytes(32).toString('hex');

let sim: SimHandle;
let proxy: TcpProxy;
beforeAll(async () => {
  sim = await startSimulator({ SIM_API_KEY: API_KEY, SIM_SHARED_KEY: SHARED_KEY });
  proxy = await startTcpProxy(sim.baseUrl);
});
afterAll(async () => {
  await closeClients();
  await proxy.close();
  await sim.close();
});
beforeEach(() => sim.control.reset());

interface LogLine {
  level: 'debug' | 'warn';
  obj: object;
  msg: string;
}

function recordingClient(lines: LogLine[], overrides: { sharedKeyHex?: string } = {}): PartnerClient {
  return clientFor(sim, {
    baseUrl: proxy.baseUrl,
    logger: {
      debug: (obj, msg) => lines.push({ level: 'debug', obj, msg }),
      warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    },
    ...overrides,
  });
}

/** Every secret the calls of a test involved: cards (from the partner's ledger), keys, headers sent. */
async function secretsOf(cards: Pick<Card, 'code' | 'pin_code'>[]): Promise<string[]> {
  const headers = authorizationHeaders(proxy.sent());
  const signatures = headers.map((h) => /Signature=([0-9a-fA-F]+)/.exec(h)![1]!);
  const secrets = [
    ...cards.flatMap((c) => [c.code, c.pin_code ?? '']),
    SHARED_KEY,
    WRONG_SHARED_KEY,
    API_KEY,
    ...headers,
    ...signatures,
  ].filter((s) => s.length > 0);
  expect(headers.length).toBeGreaterThan(0);
  return secrets;
}

describe('Nothing secret is logged by the client: card code, PIN, keys, signature, Authorization header', () => {
  it('a successful pull and failed ones (definitive, credentials, error page, reset, timeout) log their outcome only', async () => {
    const lines: LogLine[] = [];
    const client = recordingClient(lines);

    const card = valueOf(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 2500));
    expect(card.pin_code).toBeTruthy();
    expect(valueOf(await client.getCard(card.id)).code).toBe(card.code);
    expect((await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1234)).kind).toBe('definitive');
    expect((await recordingClient(lines, { sharedKeyHex: WRONG_SHARED_KEY }).getBalance()).kind).toBe('credentials');
    // Cards issued whose answers were lost: their codes and PINs are in no answer the client read, nor in a log.
    await sim.control.addFault({ endpoint: 'cards', mode: 'error_after_issue', times: 1 });
    expect((await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).kind).toBe('unknown');
    await sim.control.addFault({ endpoint: 'cards', mode: 'reset', times: 1 });
    expect((await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).kind).toBe('unknown');
    await sim.control.addFault({ endpoint: 'cards', mode: 'hang', latency_ms: 5_000, times: 1 });
    expect(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 5000)).toMatchObject({ reason: 'timeout' });

    // The calls were logged (one line each), so the check below is not vacuous. A pull call's answer is at
    // debug (the worker's PartnerAsk logs it with what it decided); a read's failure is a warning.
    expect(lines.map((l) => l.level)).toEqual(['debug', 'debug', 'debug', 'warn', 'debug', 'debug', 'debug']);
    const logged = JSON.stringify(lines);
    const issued = await cardsIssued(sim);
    expect(issued).toHaveLength(4);
    for (const secret of await secretsOf(issued)) expect(logged).not.toContain(secret);
    expect(logged).not.toMatch(/Bearer|Signature=/i);
  });

  it('an async pull through to success: the card inside the pull request is not logged', async () => {
    const lines: LogLine[] = [];
    const client = recordingClient(lines);
    const requestId = randomUUID();
    valueOf(await client.createPullRequest(requestId, 'EURO-TRAVEL-REGION', 2000));
    expect(await pollUntilFinished(client, requestId)).toMatchObject({ status: 'success' });
    expect(lines.length).toBeGreaterThan(1);
    const issued = await cardsIssued(sim);
    expect(issued).toHaveLength(1);
    const logged = JSON.stringify(lines);
    for (const secret of await secretsOf(issued)) expect(logged).not.toContain(secret);
  });
});
