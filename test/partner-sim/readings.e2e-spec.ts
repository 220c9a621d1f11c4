import { startSimulator, useSimulator, type SimHandle } from '../support/simulator';
import { sleep } from '@cardpull/testing';
import { ENVELOPE, createPullRequest, followPullRequest, get, getPullRequest, pullSync } from './support/partner';

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

describe('business_first with funds: a balance too low meets not_enough_funds before the request ID; with funds back, the stored answer', () => {
  it('POST /cards: the last funds went to the first call; the repeat meets not_enough_funds, then (funds back) the same card, never a second', async () => {
    await sim.control.setBalance(7);
    await sim.control.addFault({ endpoint: 'cards', mode: 'business_first' });
    const first = await pullSync(sim, 'FAST-FREE', 700, 'bf-funds');
    expect(first.status).toBe(200);
    expect(await pullSync(sim, 'FAST-FREE', 700, 'bf-funds')).toMatchObject(ENVELOPE(422, 'not_enough_funds', 'unprocessable_entity'));
    await sim.control.setBalance(7);
    const again = await pullSync(sim, 'FAST-FREE', 700, 'bf-funds');
    expect(again.status).toBe(200);
    expect(again.body.card.id).toBe(first.body.card.id);
    expect((await ledger()).cards.map((c) => c.request_id)).toEqual(['bf-funds']);
    expect((await sim.control.state()).balance).toBe(7);
  });

  it('POST /pull_requests: a used request ID meets not_enough_funds; with funds back, 422 already used, and its pull request holds the card', async () => {
    await sim.control.setBalance(7);
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'business_first' });
    expect((await createPullRequest(sim, 'FAST-FREE', 700, 'bf-funds-pr')).status).toBe(200);
    expect(await createPullRequest(sim, 'FAST-FREE', 700, 'bf-funds-pr')).toMatchObject(ENVELOPE(422, 'not_enough_funds', 'unprocessable_entity'));
    await sim.control.setBalance(7);
    expect(await createPullRequest(sim, 'FAST-FREE', 700, 'bf-funds-pr')).toMatchObject(ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'));
    const { statuses, last } = await followPullRequest(sim, 'bf-funds-pr');
    expect(statuses.at(-1)).toBe('success');
    expect((await ledger()).cards).toEqual([expect.objectContaining({ id: last.body.pull_request.card.id, request_id: 'bf-funds-pr' })]);
  });
});

describe('read_lag: a lagging read copy answers 404 for latency_ms after a pull request’s creation', () => {
  it('404 pull_request_not_found while young, then the pull request', async () => {
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 2_000, gift_card_codes: ['FAST-FREE'] });
    expect((await createPullRequest(sim, 'FAST-FREE', 700, 'lag-1')).status).toBe(200);
    expect(await getPullRequest(sim, 'lag-1')).toMatchObject(ENVELOPE(404, 'pull_request_not_found', 'not_found'));
    await sleep(2_050);
    expect((await getPullRequest(sim, 'lag-1')).body.pull_request).toMatchObject({ request_id: 'lag-1' });
    const hits = (await sim.control.faults())[0]!.hits;
    expect(hits).toBe(1); // only the answer it changed
  });
});

describe('read_lag after a 422 "already used" (lag_from already_used), and lags of minutes', () => {
  it('the lag runs from the first 422 "already used": visible before it, 404 for latency_ms after it', async () => {
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'read_lag', lag_from: 'already_used', latency_ms: 2_000 });
    expect((await createPullRequest(sim, 'FAST-FREE', 700, 'lag-used')).status).toBe(200);
    expect((await getPullRequest(sim, 'lag-used')).body.pull_request).toMatchObject({ request_id: 'lag-used' });
    expect(await createPullRequest(sim, 'FAST-FREE', 700, 'lag-used')).toMatchObject(ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'));
    expect(await getPullRequest(sim, 'lag-used')).toMatchObject(ENVELOPE(404, 'pull_request_not_found', 'not_found'));
    await sleep(2_050);
    expect((await getPullRequest(sim, 'lag-used')).body.pull_request).toMatchObject({ request_id: 'lag-used', status: 'success' });
  });

  it('a lag of minutes after the 422, beside a short lag from creation: 404 all through a settle window while the pull request holds a card', async () => {
    // Two read_lag readings: the first (from creation, 100 ms) no longer changes the answer, so the second applies.
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 100 });
    const long = await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'read_lag', lag_from: 'already_used', latency_ms: 600_000, request_ids: ['lag-long'] });
    expect((await createPullRequest(sim, 'FAST-FREE', 800, 'lag-long')).status).toBe(200);
    await sleep(150);
    expect((await getPullRequest(sim, 'lag-long')).status).toBe(200);
    expect((await createPullRequest(sim, 'FAST-FREE', 800, 'lag-long')).status).toBe(422);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      seen.push((await getPullRequest(sim, 'lag-long')).status);
      await sleep(250);
    }
    expect(seen).toEqual([404, 404, 404, 404, 404]);
    expect((await ledger()).pulls).toEqual([expect.objectContaining({ request_id: 'lag-long', outcome: 'card' })]);
    expect((await sim.control.faults()).map((f) => f.hits)).toEqual([0, 5]);
    await sim.control.removeFault(long);
    expect((await getPullRequest(sim, 'lag-long')).body.pull_request).toMatchObject({ request_id: 'lag-long', status: 'success', card: expect.any(Object) });
  });
});

describe('inventory_unlimited: the inventory says "unlimited" while there is no stock', () => {
  it('GET /inventories/:code answers available_amount "unlimited" and no stocks; pulls still meet out_of_stock', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'inventory_unlimited', gift_card_codes: ['SOLD-OUT-FIXED'] });
    const inventory = await get(sim, '/partners/v1/inventories/SOLD-OUT-FIXED');
    expect(inventory.body.inventories).toMatchObject({ gift_card: { code: 'SOLD-OUT-FIXED' }, end_to_end_api: { enabled: true, available_amount: 'unlimited' }, stocks: [] });
    expect(await pullSync(sim, 'SOLD-OUT-FIXED', 1000, 'iu-1')).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
    expect(await createPullRequest(sim, 'SOLD-OUT-FIXED', 2000, 'iu-2')).toMatchObject(ENVELOPE(422, 'out_of_stock', 'unprocessable_entity'));
    // Another gift card is read as it is.
    expect((await get(sim, '/partners/v1/inventories/ACME-BOOKS-FIXED')).body.inventories.end_to_end_api.available_amount).toMatch(/^\d+$/);
    expect((await ledger()).requests.filter((r) => r.reading).map((r) => [r.path, r.reading])).toEqual([['/partners/v1/inventories/SOLD-OUT-FIXED', 'inventory_unlimited']]);
  });

  it('a stock that is unlimited for real is not a hit; the reading is only for endpoint any (GET /inventories is a read)', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'inventory_unlimited' });
    expect((await get(sim, '/partners/v1/inventories/NOVA-GAMES-FREE')).body.inventories.end_to_end_api.available_amount).toBe('unlimited');
    expect((await sim.control.faults())[0]!.hits).toBe(0);
    await expect(sim.control.addFault({ endpoint: 'cards', mode: 'inventory_unlimited' })).rejects.toThrow(/400.*does not apply to endpoint cards/);
  });
});

describe('other_request_id: the pull request answered carries another request_id than the one asked', () => {
  it('relabeled (the default): GET shows the asked pull request, its status and card, under <asked>-other', async () => {
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'other_request_id', request_ids: ['oid-1'] });
    const created = await createPullRequest(sim, 'FAST-FREE', 500, 'oid-1');
    await sleep(400);
    const shown = await getPullRequest(sim, 'oid-1');
    expect(shown.body.pull_request).toMatchObject({ id: created.body.pull_request.id, request_id: 'oid-1-other', status: 'success', card: { amount: 500 } });
    expect((await ledger()).cards.map((c) => [c.id, c.request_id])).toEqual([[shown.body.pull_request.card.id, 'oid-1']]);
    expect((await ledger()).requests.at(-1)).toMatchObject({ method: 'GET', request_id: 'oid-1', reading: 'other_request_id' });
  });

  it('POST /pull_requests: the creation answer shows shown_request_id; the pull request is still under the asked one', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'other_request_id', shown_request_id: 'someone-else', times: 1 });
    const created = await createPullRequest(sim, 'FAST-FREE', 500, 'oid-2');
    expect(created.body.pull_request).toMatchObject({ request_id: 'someone-else', status: 'waiting', amount_cents: 500 });
    expect((await getPullRequest(sim, 'oid-2')).body.pull_request).toMatchObject({ id: created.body.pull_request.id, request_id: 'oid-2' });
    expect(await getPullRequest(sim, 'someone-else')).toMatchObject(ENVELOPE(404, 'pull_request_not_found', 'not_found'));
  });

  it('another: another pull request whole, an error or a success with its card, even for an ID the partner does not know', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'async_error', request_ids: ['oid-err'] });
    await createPullRequest(sim, 'FAST-FREE', 500, 'oid-card');
    await createPullRequest(sim, 'FAST-FREE', 600, 'oid-err');
    await sleep(400);
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'other_request_id', shown: 'another', shown_request_id: 'oid-err', request_ids: ['oid-card'] });
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'other_request_id', shown: 'another', request_ids: ['oid-err', 'never-created'] });
    expect((await getPullRequest(sim, 'oid-card')).body.pull_request).toMatchObject({ request_id: 'oid-err', status: 'error', card: null });
    // Without shown_request_id: the latest pull request created other than the asked one.
    const card = (await ledger()).cards[0]!;
    expect((await getPullRequest(sim, 'oid-err')).body.pull_request).toMatchObject({ request_id: 'oid-card', status: 'success', card: { id: card.id } });
    expect((await getPullRequest(sim, 'never-created')).body.pull_request).toMatchObject({ request_id: 'oid-err', status: 'error' });
  });

  it('POST /cards has no request_id in its answer: the reading does not apply there', async () => {
    await expect(sim.control.addFault({ endpoint: 'cards', mode: 'other_request_id' })).rejects.toThrow(/400.*does not apply to endpoint cards/);
    await expect(sim.control.addFault({ endpoint: 'pull_request_status', mode: 'read_lag', shown: 'another' })).rejects.toThrow(/400.*only other_request_id takes shown/);
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
    await sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 2_000 });
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
