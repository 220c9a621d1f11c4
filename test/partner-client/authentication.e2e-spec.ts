import { randomBytes, randomUUID } from 'node:crypto';
import type { PartnerClient, PartnerOutcome } from '@cardpull/partner-client';
import { cardsIssued, clientFor, closeClient, pollUntilFinished, requestsFor, useSimulatorAndClient, valueOf } from './support/client';
import { authorizationHeaders, startTcpProxy } from './support/tcp-proxy';

// Spec, Authentication: the signed Authorization header, both token forms, and the 401 rows of the
// error table, which ARCHITECTURE.md classifies as "our credentials/config are wrong" (kind credentials).

const { sim, client: good } = useSimulatorAndClient();

/** One call per endpoint; the reads by ID use a card and a pull request that exist. */
async function everyEndpoint(client: PartnerClient): Promise<[string, PartnerOutcome<unknown>][]> {
  const cardId = valueOf(await good.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).id;
  const pullRequestId = randomUUID();
  valueOf(await good.createPullRequest(pullRequestId, 'ACME-BOOKS-FIXED', 1000));
  return [
    ['listGiftCards', await client.listGiftCards()],
    ['getGiftCard', await client.getGiftCard('ACME-BOOKS-FIXED')],
    ['createCard', await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)],
    ['getCard', await client.getCard(cardId)],
    ['createPullRequest', await client.createPullRequest(randomUUID(), 'ACME-BOOKS-FIXED', 1000)],
    ['getPullRequest', await client.getPullRequest(pullRequestId)],
    ['getInventory', await client.getInventory('ACME-BOOKS-FIXED')],
    ['getBalance', await client.getBalance()],
  ];
}

const credentials = (code: 'unauthorized' | 'invalid_signature') => ({
  kind: 'credentials',
  code,
  httpStatus: 401,
  message: expect.any(String),
});

describe('401 unauthorized (missing or not accepted credentials) -> credentials', () => {
  it('a wrong API key, on every endpoint', async () => {
    const results = await everyEndpoint(clientFor(sim, { apiKey: 'not-our-api-key' }));
    for (const [endpoint, outcome] of results) expect([endpoint, outcome]).toEqual([endpoint, credentials('unauthorized')]);
  });

  it('a wrong identifier, on every endpoint', async () => {
    const results = await everyEndpoint(clientFor(sim, { identifier: 'not-our-identifier' }));
    for (const [endpoint, outcome] of results) expect([endpoint, outcome]).toEqual([endpoint, credentials('unauthorized')]);
  });

  it('a refused pull issues no card and does not use up the request ID', async () => {
    const requestId = randomUUID();
    const refused = clientFor(sim, { apiKey: 'not-our-api-key' });
    expect(await refused.createCard(requestId, 'ACME-BOOKS-FIXED', 1000)).toEqual(credentials('unauthorized'));
    expect(await cardsIssued(sim)).toEqual([]);
    expect((await requestsFor(sim, requestId)).map((r) => r.auth)).toEqual(['unauthorized']);
    // Once the credentials are fixed, the same request ID pulls normally.
    expect(valueOf(await good.createCard(requestId, 'ACME-BOOKS-FIXED', 1000))).toMatchObject({ amount: 1000 });
  });

  it('a clock far from the partner\'s (stale Timestamp) is not our credentials: the call is re-sent once, signed with the partner\'s time (partner-time.e2e-spec.ts)', async () => {
    const late = clientFor(sim, { now: () => Date.now() - 3_600_000 });
    expect((await late.getBalance()).kind).toBe('success');
    expect((await sim.control.ledger()).requests.map((r) => r.auth)).toEqual(['unauthorized', 'ok']);
  });
});

describe('401 invalid_signature (request does not match signature) -> credentials', () => {
  it('a wrong shared key, on every endpoint', async () => {
    const results = await everyEndpoint(clientFor(sim, { sharedKeyHex: randomBytes(32).toString('hex') }));
    for (const [endpoint, outcome] of results) {
      expect([endpoint, outcome]).toEqual([endpoint, credentials('invalid_signature')]);
    }
  });

  it('no card is issued for a pull with a bad signature', async () => {
    const requestId = randomUUID();
    const bad = clientFor(sim, { sharedKeyHex: randomBytes(32).toString('hex') });
    expect((await bad.createCard(requestId, 'ACME-BOOKS-FIXED', 1000)).kind).toBe('credentials');
    expect((await bad.createPullRequest(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).kind).toBe('credentials');
    expect(await cardsIssued(sim)).toEqual([]);
    expect((await sim.control.state()).counts).toMatchObject({ cards: 0, pull_requests: 0 });
  });
});

describe('Signature: both token forms (the worked example with the identifier, the four-part formula) are accepted', () => {
  it.each(['example', 'formula'] as const)('%s form: GET and POST answer success', async (signatureForm) => {
    const client = clientFor(sim, { signatureForm });
    // GET, no payload
    expect((await client.getBalance()).kind).toBe('success');
    expect(valueOf(await client.getGiftCard('FAST-FREE')).code).toBe('FAST-FREE');
    expect((await client.listGiftCards()).kind).toBe('success');
    // POST, the JSON body signed sorted and lowercased (gift card codes are upper-case)
    const card = valueOf(await client.createCard(randomUUID(), 'FAST-FREE', 777));
    expect(card).toMatchObject({ amount: 777, gift_card_code: 'FAST-FREE' });
    expect(valueOf(await client.getCard(card.id))).toEqual(card);
    const requestId = randomUUID();
    expect(valueOf(await client.createPullRequest(requestId, 'FAST-FREE', 888))).toMatchObject({ status: 'waiting' });
    expect(await pollUntilFinished(client, requestId)).toMatchObject({ status: 'success' });
    // The simulator's signature check passed on every request of this test.
    const ledger = await sim.control.ledger();
    expect(ledger.requests.length).toBeGreaterThan(0);
    expect(ledger.requests.every((r) => r.auth === 'ok')).toBe(true);
  });
});

describe('Signature: the form is a setting of the client (ARCHITECTURE.md, Signature), not a no-op', () => {
  it('at the same instant the two forms send different signatures, and each is accepted', async () => {
    const proxy = await startTcpProxy(sim.baseUrl);
    const at = Date.now();
    const example = clientFor(sim, { baseUrl: proxy.baseUrl, signatureForm: 'example', now: () => at });
    const formula = clientFor(sim, { baseUrl: proxy.baseUrl, signatureForm: 'formula', now: () => at });
    try {
      expect((await example.getBalance()).kind).toBe('success');
      expect((await formula.getBalance()).kind).toBe('success');
      const [first, second] = authorizationHeaders(proxy.sent()).map((h) => /Signature=([0-9a-f]+), Timestamp=(\d+)/.exec(h)!);
      expect(first![2]).toBe(second![2]);
      expect(first![1]).not.toBe(second![1]);
    } finally {
      await closeClient(example, formula);
      await proxy.close();
    }
  });
});
