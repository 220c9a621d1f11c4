import { randomBytes, randomUUID } from 'node:crypto';
import type { CallPermit, CallResult, PartnerCallEvent } from '@cardpull/partner-client';
import { clientFor, requestsFor, requestsTo, useSimulatorAndClient, valueOf } from './support/client';

// ARCHITECTURE.md "Partner time": the client keeps the partner's clock from the Date headers of its answers
// and signs with it; a 401 whose Date shows our signing time was off is sent again once, signed with the
// partner's time. Only a call refused again is `credentials` (what opens the fleet-wide partner circuit).

const { sim } = useSimulatorAndClient();
const BALANCE = '/partners/v1/balance';
/** A partner 2 minutes ahead of us, accepting 30 s of skew, answering a stale Timestamp invalid_signature. */
const hostileAhead = () => sim.control.setClock({ offset_s: 120, window_s: 30, stale_timestamp_code: 'invalid_signature' });
const seconds = (ms: number) => Math.round(ms / 100) / 10;
const statuses = (rows: { status: number | null; auth: string | null }[]) => rows.map((r) => [r.status, r.auth]);

describe('the client signs with the partner\'s clock: a partner 2 minutes ahead with a 30 s window', () => {
  it('sync pull: the first call is refused, re-sent once signed with the partner\'s time and issues one card; the offset is ~120 s; later calls are signed right at once', async () => {
    await hostileAhead();
    const events: PartnerCallEvent[] = [];
    const client = clientFor(sim, { onCall: (e) => events.push(e) });
    const requestId = randomUUID();
    const card = valueOf(await client.createCard(requestId, 'FAST-FREE', 700));
    expect(card).toMatchObject({ amount: 700 });
    expect(statuses(await requestsFor(sim, requestId))).toEqual([[401, 'invalid_signature'], [200, 'ok']]);
    expect(seconds(client.clock.offsetMs())).toBeGreaterThanOrEqual(119);
    expect(seconds(client.clock.offsetMs())).toBeLessThanOrEqual(121.5);
    // One event per call, saying it carried a re-sign.
    expect(events).toEqual([expect.objectContaining({ endpoint: 'createCard', outcome: 'success', resigned: true, requestId })]);

    const before = (await sim.control.ledger()).requests.length;
    expect(valueOf(await client.getBalance())).toBeDefined();
    const asyncId = randomUUID();
    expect(valueOf(await client.createPullRequest(asyncId, 'FAST-FREE', 800))).toMatchObject({ status: 'waiting' });
    expect(valueOf(await client.getPullRequest(asyncId))).toMatchObject({ request_id: asyncId });
    const after = (await sim.control.ledger()).requests.slice(before);
    expect(after.map((r) => [r.method, r.auth])).toEqual([['GET', 'ok'], ['POST', 'ok'], ['GET', 'ok']]);
    expect(events.slice(1).every((e) => e.resigned === undefined)).toBe(true);
    expect((await sim.control.ledger()).cards.map((c) => c.request_id)).toEqual([requestId]);
  });

  it('async pull: the refused creation is re-sent with the same body request ID, and one pull request is created', async () => {
    await hostileAhead();
    const client = clientFor(sim);
    const requestId = randomUUID();
    expect(valueOf(await client.createPullRequest(requestId, 'FAST-FREE', 900))).toMatchObject({ request_id: requestId });
    expect(statuses(await requestsFor(sim, requestId))).toEqual([[401, 'invalid_signature'], [expect.any(Number), 'ok']]);
    expect((await sim.control.ledger()).pulls.map((p) => p.request_id)).toEqual([requestId]);
  });

  it('the call\'s permit covers the re-send: done once, with the final answer', async () => {
    await hostileAhead();
    const results: CallResult[] = [];
    const permit: CallPermit = { kind: 'create', done: (r) => results.push(r), recheck: async () => 0 };
    const client = clientFor(sim);
    valueOf(await client.createCard(randomUUID(), 'FAST-FREE', 100, permit));
    expect(results).toEqual([{ sent: true, httpStatus: 200 }]);
  });

  it('a wrong shared key is still credentials (invalid_signature): the re-signed call is refused too, and nothing is issued', async () => {
    await hostileAhead();
    const events: PartnerCallEvent[] = [];
    const bad = clientFor(sim, { sharedKeyHex: randomBytes(32).toString('hex'), onCall: (e) => events.push(e) });
    const requestId = randomUUID();
    expect(await bad.createCard(requestId, 'FAST-FREE', 100)).toEqual({ kind: 'credentials', code: 'invalid_signature', httpStatus: 401, message: expect.any(String) });
    expect(statuses(await requestsFor(sim, requestId))).toEqual([[401, 'invalid_signature'], [401, 'invalid_signature']]);
    expect(events).toEqual([expect.objectContaining({ outcome: 'credentials', code: 'invalid_signature', resigned: true })]);
    // Its clock is now the partner's: the next refusal is not re-sent (nothing suggests the time).
    const second = randomUUID();
    expect((await bad.createPullRequest(second, 'FAST-FREE', 100)).kind).toBe('credentials');
    expect(statuses(await requestsFor(sim, second))).toEqual([[401, 'invalid_signature']]);
    expect((await sim.control.ledger()).cards).toEqual([]);
    expect((await sim.control.state()).counts).toMatchObject({ cards: 0, pull_requests: 0 });
  });

  it('a wrong API key is still credentials (unauthorized), after one re-send', async () => {
    await hostileAhead();
    const bad = clientFor(sim, { apiKey: 'not-our-api-key' });
    expect(await bad.getBalance()).toEqual({ kind: 'credentials', code: 'unauthorized', httpStatus: 401, message: expect.any(String) });
    expect(statuses(await requestsTo(sim, BALANCE))).toEqual([[401, 'unauthorized'], [401, 'unauthorized']]);
  });
});

describe('the client follows the partner\'s clock wherever it goes', () => {
  it('with our clocks agreeing, a refusal is not re-sent (a wrong key costs one call)', async () => {
    const bad = clientFor(sim, { sharedKeyHex: randomBytes(32).toString('hex') });
    expect((await bad.getBalance()).kind).toBe('credentials');
    expect(statuses(await requestsTo(sim, BALANCE))).toEqual([[401, 'invalid_signature']]);
    expect(Math.abs(bad.clock.offsetMs())).toBeLessThanOrEqual(1_500);
  });

  it('our clock an hour behind (the default partner: 300 s window, unauthorized): one re-send, then calls are accepted', async () => {
    const late = clientFor(sim, { now: () => Date.now() - 3_600_000 });
    expect(valueOf(await late.createCard(randomUUID(), 'FAST-FREE', 100))).toMatchObject({ amount: 100 });
    expect(seconds(late.clock.offsetMs())).toBeGreaterThanOrEqual(3599);
    expect((await late.getBalance()).kind).toBe('success');
    expect(statuses((await sim.control.ledger()).requests)).toEqual([[401, 'unauthorized'], [200, 'ok'], [200, 'ok']]);
  });

  it('a partner whose clock jumps ahead, then back: each jump costs one re-sent call, no order-stopping refusal', async () => {
    const client = clientFor(sim);
    for (let i = 0; i < 3; i++) expect((await client.getBalance()).kind).toBe('success');
    expect(Math.abs(client.clock.offsetMs())).toBeLessThanOrEqual(1_500);
    await hostileAhead();
    for (let i = 0; i < 3; i++) expect((await client.getBalance()).kind).toBe('success');
    expect(seconds(client.clock.offsetMs())).toBeGreaterThanOrEqual(119);
    await sim.control.setClock({ offset_s: 0 });
    for (let i = 0; i < 3; i++) expect((await client.getBalance()).kind).toBe('success');
    expect(Math.abs(client.clock.offsetMs())).toBeLessThanOrEqual(1_500);
    expect((await requestsTo(sim, BALANCE)).map((r) => r.status)).toEqual([200, 200, 200, 401, 200, 200, 200, 401, 200, 200, 200]);
  });
});
