import { startSimulator, useSimulator, type SimHandle } from '../support/simulator';
import { sleep } from '@cardpull/testing';
import { ENVELOPE, createPullRequest, getPullRequest, pullSync } from './support/partner';

/**
 * The other readings of the spec's silent points, as the simulator plays them when asked (faults of the
 * "reading" family, and the delivery faults rate_limited and wrong_card). Each can be switched on per gift
 * card or request ID through the control API, or from the start with SIM_FAULTS.
 */
const sim = useSimulator();
const ledger = () => sim.control.ledger();

describe('business_first: business errors are checked before a known request ID is looked at', () => {
  it('POST /cards: a repeat meets out_of_stock when the last unit went to its own first call; with stock back, the stored card', async () => {
    await sim.control.setStock('ACME-BOOKS-FIXED', 1, 2500);
    await sim.control.addFault({ endpoint: 'cards', mode: 'business_first', gift_card_codes: ['ACME-BOOKS-FIXED'] });
    const first = await pullSync(sim, 'ACME-BOOKS-FIXED', 2500, 'bf-1');
    expect(first.status).toBe(200);
    expect(await pullSync(sim, 'ACME-BOOKS-FIXED', 2500, 'bf-1')).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
    await sim.control.setStock('ACME-BOOKS-FIXED', 1, 2500);
    const again = await pullSync(sim, 'ACME-BOOKS-FIXED', 2500, 'bf-1');
    expect(again.body.card.id).toBe(first.body.card.id);
    expect((await ledger()).cards).toHaveLength(1);
    expect((await ledger()).requests.filter((r) => r.request_id === 'bf-1').map((r) => r.reading ?? null)).toEqual([null, 'business_first', null]);
  });

  it('POST /pull_requests: a used request ID meets the business error instead of 422 unprocessable_entity', async () => {
    await sim.control.setStock('ACME-BOOKS-FIXED', 1, 5000);
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'business_first' });
    expect((await createPullRequest(sim, 'ACME-BOOKS-FIXED', 5000, 'bf-2')).status).toBe(200);
    expect(await createPullRequest(sim, 'ACME-BOOKS-FIXED', 5000, 'bf-2')).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
    expect(await createPullRequest(sim, 'ACME-BOOKS-FIXED', 1234, 'bf-2')).toMatchObject(ENVELOPE(422, 'invalid_amount', 'unprocessable_entity'));
    await sim.control.setStock('ACME-BOOKS-FIXED', 3, 5000);
    expect(await createPullRequest(sim, 'ACME-BOOKS-FIXED', 5000, 'bf-2')).toMatchObject(ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'));
  });
});

describe('read_lag: a lagging read copy answers 404 for latency_ms after a pull request’s creation', () => {
  it('404 pull_request_not_found while young, then the pull request', async () => {
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 400, gift_card_codes: ['FAST-FREE'] });
    expect((await createPullRequest(sim, 'FAST-FREE', 700, 'lag-1')).status).toBe(200);
    expect(await getPullRequest(sim, 'lag-1')).toMatchObject(ENVELOPE(404, 'pull_request_not_found', 'not_found'));
    await sleep(450);
    expect((await getPullRequest(sim, 'lag-1')).body.pull_request).toMatchObject({ request_id: 'lag-1' });
    const hits = (await sim.control.faults())[0]!.hits;
    expect(hits).toBe(1); // only the answer it changed
  });
});

describe('rate_limited: 429 with Retry-After, nothing done', () => {
  it.each([
    ['seconds', /^3$/],
    ['http_date', /GMT$/],
  ] as const)('Retry-After as %s; the request ID stays unused', async (format, header) => {
    await sim.control.addFault({ endpoint: 'any', mode: 'rate_limited', retry_after_s: 3, retry_after_format: format, times: 2 });
    const limited = await pullSync(sim, 'FAST-FREE', 500, `rl-${format}`);
    expect(limited).toMatchObject(ENVELOPE(429, 'rate_limited', 'too_many_requests'));
    expect(String(limited.headers['retry-after'])).toMatch(header);
    expect(await getPullRequest(sim, 'nope')).toMatchObject({ status: 429 });
    expect((await ledger()).cards).toEqual([]);
    expect((await pullSync(sim, 'FAST-FREE', 500, `rl-${format}`)).status).toBe(200);
  });

  it('error_before_issue can answer the envelope of a business error, with a Retry-After', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 422, error_code: 'out_of_stock', retry_after_s: 5, times: 1 });
    const refused = await pullSync(sim, 'FAST-FREE', 600, 'ebi-1');
    expect(refused).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
    expect(refused.headers['retry-after']).toBe('5');
  });
});

describe('accepted_202: "come back later" as 202 {"status": "processing"}', () => {
  it('a repeat while the pull runs gets 202 processing, then the card', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'accepted_202' });
    await sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 300 });
    const first = pullSync(sim, 'FAST-FREE', 800, 'acc-1');
    await sleep(80);
    const later = await pullSync(sim, 'FAST-FREE', 800, 'acc-1');
    expect(later).toMatchObject({ status: 202, body: { status: 'processing' } });
    expect(later.headers['retry-after']).toBe('10');
    expect((await first).status).toBe(200);
  });
});

describe('wrong_card: the card issued is for another amount', () => {
  it.each(['cards', 'pull_requests'] as const)('%s: amount + amount_delta, recorded so in the ledger, replayed as is', async (endpoint) => {
    await sim.control.addFault({ endpoint, mode: 'wrong_card', amount_delta: 300, times: 1 });
    const id = `wc-${endpoint}`;
    if (endpoint === 'cards') {
      expect((await pullSync(sim, 'FAST-FREE', 900, id)).body.card.amount).toBe(1200);
      expect((await pullSync(sim, 'FAST-FREE', 900, id)).body.card.amount).toBe(1200);
    } else {
      await createPullRequest(sim, 'FAST-FREE', 900, id);
      await sleep(400);
      expect((await getPullRequest(sim, id)).body.pull_request.card.amount).toBe(1200);
    }
    expect((await ledger()).cards.map((c) => c.amount)).toEqual([1200]);
  });
});

describe('the ledger’s pulls: what the partner accepted and how it ended', () => {
  it('a sync pull refused at completion, a sync card, an async card and an async error', async () => {
    await sim.control.setStock('ACME-BOOKS-FIXED', 0, 1000);
    await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'p-refused');
    await pullSync(sim, 'FAST-FREE', 100, 'p-card');
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'async_error', times: 1 });
    await createPullRequest(sim, 'FAST-FREE', 100, 'p-error');
    await createPullRequest(sim, 'FAST-FREE', 100, 'p-async');
    await sleep(450);
    const pulls = Object.fromEntries((await ledger()).pulls.map((p) => [p.request_id, p]));
    expect(pulls['p-refused']).toMatchObject({ via: 'sync', outcome: 'error', error_code: 'out_of_stock', card_id: null });
    expect(pulls['p-card']).toMatchObject({ via: 'sync', outcome: 'card', card_id: expect.any(String) });
    expect(pulls['p-error']).toMatchObject({ via: 'async', outcome: 'error' });
    expect(pulls['p-async']).toMatchObject({ via: 'async', outcome: 'card' });
    for (const p of Object.values(pulls)) expect(Date.parse(p.finished_at!)).toBeGreaterThanOrEqual(Date.parse(p.accepted_at));
  });
});

describe('SIM_FAULTS: faults and readings switched on from the start', () => {
  let configured: SimHandle | undefined;
  afterAll(() => configured?.close());

  it('installed at start, and again after a reset', async () => {
    configured = await startSimulator({ SIM_FAULTS: JSON.stringify([{ endpoint: 'cards', mode: 'business_first' }, { endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 1000 }]) });
    const modes = async () => (await configured!.control.faults()).map((f) => f.mode);
    expect(await modes()).toEqual(['business_first', 'read_lag']);
    await configured.control.clearFaults();
    expect(await modes()).toEqual([]);
    await configured.control.reset();
    expect(await modes()).toEqual(['business_first', 'read_lag']);
  });

  it('a malformed value stops the simulator with a message naming SIM_FAULTS', async () => {
    await expect(startSimulator({ SIM_FAULTS: 'not json' })).rejects.toThrow(/SIM_FAULTS/);
    await expect(startSimulator({ SIM_FAULTS: '[{"endpoint":"cards","mode":"read_lag"}]' })).rejects.toThrow(/SIM_FAULTS: fault 1 is not valid/);
  });
});
