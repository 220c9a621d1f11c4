import { useSimulator } from '../support/simulator';
import { balanceOf, createPullRequest, ENVELOPE, followPullRequest, get, getPullRequest, seedCostNow } from './support/partner';

// Long enough that `waiting` is still seen after a few other calls on a loaded machine.
const sim = useSimulator({ SIM_ASYNC_DELAY_MS: '1200' });

describe('Pull request states: waiting -> processing -> success, card filled at success', () => {
  it('goes through every state, updated_at moving on each transition', async () => {
    const created = await createPullRequest(sim, 'ACME-BOOKS-FIXED', 2500, 'life-1');
    expect(created.body.pull_request).toMatchObject({ status: 'waiting', card: null });
    const seen: { status: string; updated_at: string; card: unknown }[] = [];
    for (;;) {
      const pr = (await getPullRequest(sim, 'life-1')).body.pull_request;
      if (seen[seen.length - 1]?.status !== pr.status) seen.push(pr);
      if (pr.status === 'success' || pr.status === 'error') break;
      await new Promise((r) => setTimeout(r, 15));
    }
    expect(seen.map((s) => s.status)).toEqual(['waiting', 'processing', 'success']);
    expect(seen[0]!.card).toBeNull();
    expect(seen[1]!.card).toBeNull();
    const updated = seen.map((s) => Date.parse(s.updated_at));
    expect(updated[1]!).toBeGreaterThan(updated[0]!);
    expect(updated[2]!).toBeGreaterThan(updated[1]!);

    const card = seen[2]!.card as { id: string };
    expect(card).toMatchObject({ amount: 2500, gift_card_code: 'ACME-BOOKS-FIXED' });
    expect((await get(sim, `/partners/v1/cards/${card.id}`)).body.card).toEqual(card);
    const ledger = await sim.control.ledger();
    expect(ledger.cards).toEqual([expect.objectContaining({ id: card.id, request_id: 'life-1', via: 'async' })]);
  });

  it('stock and balance are reserved at creation, and the card is issued only at success', async () => {
    await createPullRequest(sim, 'ACME-BOOKS-FIXED', 10000, 'reserve-1');
    expect(await balanceOf(sim)).toBeCloseTo(1_000_000 - seedCostNow('ACME-BOOKS-FIXED', 10000), 2);
    const inventory = await get(sim, '/partners/v1/inventories/ACME-BOOKS-FIXED');
    expect(inventory.body.inventories.stocks).toContainEqual({ facial_value: 10000, owned_quantity: 49, shared_quantity: 0 });
    expect((await sim.control.ledger()).cards).toEqual([]);
    await followPullRequest(sim, 'reserve-1');
    expect(await balanceOf(sim)).toBeCloseTo(1_000_000 - seedCostNow('ACME-BOOKS-FIXED', 10000), 2);
    expect((await sim.control.ledger()).cards).toHaveLength(1);
  });
});

describe('Pull request states: failure during the pull -> error (async_error fault), reservation released', () => {
  it('ends in error with card null; stock and balance come back', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'async_error' });
    const created = await createPullRequest(sim, 'ACME-BOOKS-FIXED', 10000, 'fails-1');
    expect(created.body.pull_request.status).toBe('waiting');
    expect(await balanceOf(sim)).toBeCloseTo(1_000_000 - seedCostNow('ACME-BOOKS-FIXED', 10000), 2);
    const { statuses, last } = await followPullRequest(sim, 'fails-1');
    expect(statuses).toEqual(['waiting', 'processing', 'error']);
    expect(last.body.pull_request.card).toBeNull();
    expect(await balanceOf(sim)).toBe(1_000_000);
    const inventory = await get(sim, '/partners/v1/inventories/ACME-BOOKS-FIXED');
    expect(inventory.body.inventories.stocks).toContainEqual({ facial_value: 10000, owned_quantity: 50, shared_quantity: 0 });
    expect((await sim.control.ledger()).cards).toEqual([]);
  });

  it('after an error a new request ID pulls normally (the fault hit once)', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'async_error', times: 1 });
    await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'fails-2');
    expect((await followPullRequest(sim, 'fails-2')).statuses.pop()).toBe('error');
    await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'fails-3');
    expect((await followPullRequest(sim, 'fails-3')).statuses.pop()).toBe('success');
  });
});

describe('POST /pull_requests: 422 unprocessable_entity when the request ID is already used', () => {
  it('while waiting and after success; the first pull request is unchanged', async () => {
    const first = await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'reuse-1');
    expect(await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'reuse-1')).toMatchObject(
      ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'),
    );
    const { last } = await followPullRequest(sim, 'reuse-1');
    expect(await createPullRequest(sim, 'NOVA-GAMES-FREE', 2000, 'reuse-1')).toMatchObject({ status: 422 });
    expect(last.body.pull_request.id).toBe(first.body.pull_request.id);
    expect((await sim.control.ledger()).cards).toHaveLength(1);
  });

  it('a failed creation does not use up the request ID', async () => {
    expect((await createPullRequest(sim, 'NOPE', 1000, 'retry-1')).status).toBe(404);
    expect((await createPullRequest(sim, 'SOLD-OUT-FIXED', 1000, 'retry-1')).status).toBe(422);
    expect((await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'retry-1')).status).toBe(200);
  });
});

describe('GET /pull_requests/:request_id: 404 pull_request_not_found for an unknown request ID', () => {
  it('unknown, and a failed creation leaves nothing to find', async () => {
    expect(await getPullRequest(sim, 'ghost')).toMatchObject(ENVELOPE(404, 'pull_request_not_found', 'not_found'));
    await createPullRequest(sim, 'NOPE', 1000, 'ghost-2');
    expect((await getPullRequest(sim, 'ghost-2')).status).toBe(404);
  });
});
