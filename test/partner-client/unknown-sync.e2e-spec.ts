import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { FaultSpecInput } from '@cardpull/testing';
import { waitFor } from '@cardpull/testing';
import { cardsIssued, clientFor, TIMEOUT_MS, useSimulatorAndClient, valueOf } from './support/client';

// ARCHITECTURE.md, last row of "Partner calls and their classification": timeout, network error, 5xx, 429,
// unknown code, "come back later" -> unknown, retry the same ID. On the synchronous pull (POST /cards), with
// the spec's rule that a repeat of the request ID returns the first call's response and never a second card.

// SIM_MODE staging (the default) so that STG-BROKEN exists.
const { sim, client } = useSimulatorAndClient({ SIM_MODE: 'staging' });

/** The same request ID pulled again (no fault now): the card the partner issued the first time. */
async function replayGetsTheIssuedCard(requestId: string, giftCardCode: string, amount: number) {
  const issued = await cardsIssued(sim);
  expect(issued).toEqual([expect.objectContaining({ request_id: requestId, gift_card_code: giftCardCode, amount })]);
  const replay = valueOf(await client.createCard(requestId, giftCardCode, amount));
  expect(replay).toMatchObject({ id: issued[0]!.id, code: issued[0]!.code, pin_code: issued[0]!.pin_code });
  expect(await cardsIssued(sim)).toHaveLength(1);
}

/** A pull whose answer one `fault` loses after the card was issued: the client's outcome, then the same-ID replay. */
async function lostAnswerThenReplayed(fault: Omit<FaultSpecInput, 'endpoint' | 'times'>, amount: number, outcome: object) {
  await sim.control.addFault({ endpoint: 'cards', ...fault, times: 1 });
  const requestId = randomUUID();
  expect(await client.createCard(requestId, 'ACME-BOOKS-FIXED', amount)).toMatchObject(outcome);
  await replayGetsTheIssuedCard(requestId, 'ACME-BOOKS-FIXED', amount);
}

describe('Timeout (answer held past the client deadline) -> unknown/timeout; the card exists, a same-ID replay returns it', () => {
  it('hang on POST /cards', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'hang', latency_ms: 5_000, times: 1 });
    const requestId = randomUUID();
    const started = Date.now();
    const outcome = await client.createCard(requestId, 'ACME-BOOKS-FIXED', 2500);
    const elapsed = Date.now() - started;
    expect(outcome).toMatchObject({ kind: 'unknown', reason: 'timeout' });
    // undici's headersTimeout (set to timeoutMs by the client) runs on its 500 ms-resolution fast timers,
    // so the deadline may fire up to ~500 ms early; the AbortSignal bounds it from above.
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 500);
    // The client's own deadline ended it, not the hang: a hang that ended would have answered with the card
    // (outcome issued, not unknown/timeout). Not timed from above: a loaded machine only answers later.
    await replayGetsTheIssuedCard(requestId, 'ACME-BOOKS-FIXED', 2500);
  });

  it('hang on a read (GET /balance) -> unknown/timeout too', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'hang', latency_ms: 5_000, times: 1 });
    expect(await client.getBalance()).toMatchObject({ kind: 'unknown', reason: 'timeout' });
    // The client is still usable after a timed-out call.
    expect((await client.getBalance()).kind).toBe('success');
  });
});

describe('5xx (error page after the card was issued: error_after_issue) -> unknown/server_error; a same-ID replay returns the card', () => {
  it('500 HTML page', () =>
    lostAnswerThenReplayed({ mode: 'error_after_issue' }, 1000, { kind: 'unknown', reason: 'server_error', httpStatus: 500 }));
});

describe('5xx before anything was done (error_before_issue 503) -> unknown/server_error; nothing issued', () => {
  it('no card, no stored pull: the same ID then pulls normally', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', times: 1 });
    const requestId = randomUUID();
    expect(await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000)).toMatchObject({
      kind: 'unknown',
      reason: 'server_error',
      httpStatus: 503,
    });
    expect(await cardsIssued(sim)).toEqual([]);
    expect((await sim.control.state()).counts).toMatchObject({ cards: 0, sync_pulls: 0 });
    const card = valueOf(await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000));
    expect(await cardsIssued(sim)).toEqual([expect.objectContaining({ id: card.id, request_id: requestId })]);
  });
});

describe('Network error (connection reset after the card was issued) -> unknown/network; a same-ID replay returns the card', () => {
  it('reset on POST /cards', () => lostAnswerThenReplayed({ mode: 'reset' }, 5000, { kind: 'unknown', reason: 'network' }));

  it('reset on a read (GET /inventories/:id) -> unknown/network too', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'reset', times: 1 });
    expect(await client.getInventory('ACME-BOOKS-FIXED')).toMatchObject({ kind: 'unknown', reason: 'network' });
  });
});

describe('Partner unreachable (connection refused: nothing was sent) -> unknown/not_connected', () => {
  it('a base URL where nothing listens', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const nowhere = clientFor(sim, { baseUrl: `http://127.0.0.1:${port}` });
    expect(await nowhere.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).toMatchObject({
      kind: 'unknown',
      reason: 'not_connected',
      message: expect.stringContaining('ECONNREFUSED'),
    });
    expect(await nowhere.getBalance()).toMatchObject({ kind: 'unknown', reason: 'not_connected' });
  });
});

describe('"Come back later" (the card is still being pulled) -> unknown/in_progress; later the same ID gets the card', () => {
  it('409 pull_in_progress while pulling, then the card, one card in all', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'come_back_later', latency_ms: 2_000, times: 1 });
    const requestId = randomUUID();
    expect(await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000)).toMatchObject({
      kind: 'unknown',
      reason: 'in_progress',
      httpStatus: 409,
      code: 'pull_in_progress',
    });
    expect(await client.createCard(requestId, 'ACME-BOOKS-FIXED', 1000)).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
    expect(await cardsIssued(sim)).toEqual([]);
    // The partner finishes the pull in the background (the control API is no partner call).
    await waitFor('the card to be issued', async () => (await cardsIssued(sim)).length === 1, 10_000);
    await replayGetsTheIssuedCard(requestId, 'ACME-BOOKS-FIXED', 1000);
  });
});

describe('Latency below the client timeout -> success (a slow partner is not an unknown outcome)', () => {
  it('latency fault of a fraction of the timeout', async () => {
    const latency = Math.floor(TIMEOUT_MS / 3);
    await sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: latency, times: 1 });
    const started = Date.now();
    const card = valueOf(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000));
    expect(Date.now() - started).toBeGreaterThanOrEqual(latency - 20);
    expect(await cardsIssued(sim)).toEqual([expect.objectContaining({ id: card.id })]);
  });
});

describe('429 and error pages with unexpected statuses -> unknown (a proxy\'s page never fails an order)', () => {
  it('429 -> unknown/rate_limited, nothing issued', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 429, times: 1 });
    expect(await client.createCard(randomUUID(), 'ACME-BOOKS-FIXED', 1000)).toMatchObject({
      kind: 'unknown',
      reason: 'rate_limited',
      httpStatus: 429,
    });
    expect(await cardsIssued(sim)).toEqual([]);
  });

  it('an HTML 404 page (no envelope) -> unknown/unexpected, not a definitive failure', () =>
    lostAnswerThenReplayed({ mode: 'error_after_issue', status: 404 }, 1000, { kind: 'unknown', reason: 'unexpected', httpStatus: 404 }));

  it('a 200 whose body is not a card (HTML) -> unknown/unparseable; the replay returns the card', () =>
    lostAnswerThenReplayed({ mode: 'error_after_issue', status: 200 }, 1000, { kind: 'unknown', reason: 'unparseable', httpStatus: 200 }));
});

describe('Staging: card-pulling that does not work for some brands (STG-BROKEN) -> unknown/server_error', () => {
  it('503 service_unavailable, no card; the repeat gets the same stored answer', async () => {
    const requestId = randomUUID();
    const first = await client.createCard(requestId, 'STG-BROKEN', 1000);
    expect(first).toMatchObject({ kind: 'unknown', reason: 'server_error', httpStatus: 503, code: 'service_unavailable' });
    expect(await client.createCard(requestId, 'STG-BROKEN', 1000)).toEqual(first);
    expect(await cardsIssued(sim)).toEqual([]);
  });
});
