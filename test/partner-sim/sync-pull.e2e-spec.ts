import { useSimulator } from '../support/simulator';
import { sleep } from '@cardpull/testing';
import { balanceOf, call, ENVELOPE, pullSync, seedCostNow } from './support/partner';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const sim = useSimulator();

describe('POST /cards rule: repeating the call with the same request ID returns the first response, no other card', () => {
  it('same answer twice, one card in the ledger, the balance drawn once', async () => {
    const first = await pullSync(sim, 'ACME-BOOKS-FIXED', 2500, 'same-1');
    const second = await pullSync(sim, 'ACME-BOOKS-FIXED', 2500, 'same-1');
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    const ledger = await sim.control.ledger();
    expect(ledger.cards.map((c) => [c.id, c.request_id, c.via])).toEqual([[first.body.card.id, 'same-1', 'sync']]);
    expect(await balanceOf(sim)).toBeCloseTo(1_000_000 - seedCostNow('ACME-BOOKS-FIXED', 2500), 2);
  });

  it('a repeat with a different body still gets the first answer', async () => {
    const first = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'same-2');
    const other = await pullSync(sim, 'NOVA-GAMES-FREE', 5000, 'same-2');
    expect(other.body).toEqual(first.body);
    expect((await sim.control.ledger()).cards).toHaveLength(1);
  });

  it('the request ID is echoed in the X-RequestId response header', async () => {
    const res = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'echo-me');
    expect(res.headers['x-requestid']).toBe('echo-me');
  });
});

describe('POST /cards rule: without X-RequestId the service generates one (returned in X-RequestId, our choice)', () => {
  it('a UUID is generated, recorded with the card, and works as the request ID of a repeat', async () => {
    const first = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000);
    const generated = first.headers['x-requestid'] as string;
    expect(generated).toMatch(UUID);
    const ledger = await sim.control.ledger();
    expect(ledger.cards[0]).toMatchObject({ id: first.body.card.id, request_id: generated });
    const repeat = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, generated);
    expect(repeat.body).toEqual(first.body);
  });

  it('two calls without the header are two pulls', async () => {
    const a = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000);
    const b = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000);
    expect(a.headers['x-requestid']).not.toBe(b.headers['x-requestid']);
    expect(a.body.card.id).not.toBe(b.body.card.id);
  });
});

describe('POST /cards rule: if the first pull failed, the repeated call returns that error', () => {
  it('still out_of_stock on the repeat after stock arrived; a new request ID pulls', async () => {
    const first = await pullSync(sim, 'SOLD-OUT-FIXED', 1000, 'failed-1');
    expect(first).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
    await sim.control.setStock('SOLD-OUT-FIXED', 5, 1000);
    const repeat = await pullSync(sim, 'SOLD-OUT-FIXED', 1000, 'failed-1');
    expect(repeat.status).toBe(422);
    expect(repeat.body).toEqual(first.body);
    expect((await pullSync(sim, 'SOLD-OUT-FIXED', 1000, 'failed-2')).status).toBe(200);
  });

  it('also for gift_card_not_found and invalid_amount', async () => {
    const notFound = await pullSync(sim, 'NOPE', 1000, 'failed-3');
    expect(await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'failed-3')).toMatchObject({ status: 404, body: notFound.body });
    const invalid = await pullSync(sim, 'ACME-BOOKS-FIXED', 7, 'failed-4');
    expect(await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'failed-4')).toMatchObject({ status: 422, body: invalid.body });
  });

  it('a malformed body (400) is not a pull: the request ID stays unused', async () => {
    const bad = await call(sim, { method: 'POST', path: '/partners/v1/cards', rawBody: '{"nope":1}', headers: { 'X-RequestId': 'bad-1' } });
    expect(bad.status).toBe(400);
    expect((await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'bad-1')).status).toBe(200);
  });
});

describe('POST /cards rule: while the card is still being pulled, a repeat is told to come back later', () => {
  const slow = useSimulator({ SIM_SYNC_DELAY_MS: '400' });

  it('409 pull_in_progress, status conflict, Retry-After: 10; then the first answer, then the same card', async () => {
    const started = Date.now();
    const first = pullSync(slow, 'ACME-BOOKS-FIXED', 5000, 'slow-1');
    await sleep(100);
    const during = await pullSync(slow, 'ACME-BOOKS-FIXED', 5000, 'slow-1');
    expect(during).toMatchObject(ENVELOPE(409, 'pull_in_progress', 'conflict'));
    expect(during.body.errors[0].message).toMatch(/come back later/i);
    expect(during.headers['retry-after']).toBe('10');
    expect(during.headers['x-requestid']).toBe('slow-1');
    const done = await first;
    expect(done.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect((await pullSync(slow, 'ACME-BOOKS-FIXED', 5000, 'slow-1')).body).toEqual(done.body);
    expect((await slow.control.ledger()).cards).toHaveLength(1);
  });
});
