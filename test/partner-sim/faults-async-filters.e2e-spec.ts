import { useSimulator } from '../support/simulator';
import { createPullRequest, ENVELOPE, followPullRequest, get, getPullRequest, pullSync } from './support/partner';

const sim = useSimulator();

describe('Faults on POST /pull_requests: the pull request is created, its answer is lost or broken', () => {
  it('hang: the client times out; the request ID is used (422) and the pull request succeeds', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'hang' });
    await expect(createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'pr-hang', { timeoutMs: 300 })).rejects.toThrow();
    expect(await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'pr-hang')).toMatchObject(
      ENVELOPE(422, 'unprocessable_entity', 'unprocessable_entity'),
    );
    expect((await followPullRequest(sim, 'pr-hang')).statuses.pop()).toBe('success');
  });

  it('error_after_issue: 500 error page, yet the pull request exists', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'error_after_issue' });
    const res = await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'pr-eai');
    expect(res.status).toBe(500);
    expect((await getPullRequest(sim, 'pr-eai')).status).toBe(200);
  });

  it('reset: the connection is cut, yet the pull request exists', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'reset' });
    await expect(createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'pr-reset')).rejects.toThrow();
    expect((await getPullRequest(sim, 'pr-reset')).status).toBe(200);
  });

  it('error_before_issue: 503 and nothing created', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'error_before_issue' });
    expect((await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'pr-ebi')).status).toBe(503);
    await sim.control.clearFaults();
    expect((await getPullRequest(sim, 'pr-ebi')).status).toBe(404);
  });

  it('latency: the background pull takes latency_ms longer', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'latency', latency_ms: 300 });
    const started = Date.now();
    expect((await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'pr-lat')).status).toBe(200);
    expect((await followPullRequest(sim, 'pr-lat')).statuses.pop()).toBe('success');
    expect(Date.now() - started).toBeGreaterThanOrEqual(sim.config.SIM_ASYNC_DELAY_MS + 280);
  });
});

describe('Faults on GET /pull_requests/:request_id (pull_request_status): the poll fails, the pull goes on', () => {
  it('error_before_issue, reset and latency apply to the poll only', async () => {
    await createPullRequest(sim, 'NOVA-GAMES-FREE', 1000, 'poll-1');
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'error_before_issue', times: 1 });
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'reset', times: 1 });
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'latency', latency_ms: 250, times: 1 });
    expect((await getPullRequest(sim, 'poll-1')).status).toBe(503);
    await expect(getPullRequest(sim, 'poll-1')).rejects.toThrow();
    const started = Date.now();
    const slow = await getPullRequest(sim, 'poll-1');
    expect(slow.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(230);
    // Computed after the delay, so it is current.
    expect(slow.body.pull_request.status).toBe('success');
  });
});

describe('Fault endpoint any: reads are delayed or broken too', () => {
  it('latency on GET /balance, error_before_issue on GET /gift_cards', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'latency', latency_ms: 200, times: 1 });
    const started = Date.now();
    expect((await get(sim, '/partners/v1/balance')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    await sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', status: 502, times: 1 });
    expect((await get(sim, '/partners/v1/gift_cards')).status).toBe(502);
    expect((await get(sim, '/partners/v1/gift_cards')).status).toBe(200);
  });
});

describe('Fault options: times, share, gift_card_codes, request_ids', () => {
  it('times: stops after hitting N requests; hits are listed', async () => {
    const id = await sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', times: 2 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await pullSync(sim, 'FAST-FREE', 100)).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    expect(await sim.control.faults()).toEqual([expect.objectContaining({ id, hits: 2, times: 2, share: 1 })]);
  });

  it('share 0 never hits; share 0.5 hits about half of the matching requests', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', share: 0 });
    expect((await get(sim, '/partners/v1/balance')).status).toBe(200);
    await sim.control.clearFaults();
    await sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', share: 0.5 });
    let failed = 0;
    for (let i = 0; i < 200; i++) if ((await get(sim, '/partners/v1/balance')).status === 503) failed++;
    // Binomial(200, 0.5): outside 60..140 has a probability below 1e-8.
    expect(failed).toBeGreaterThan(60);
    expect(failed).toBeLessThan(140);
    expect((await sim.control.faults())[0]!.hits).toBe(failed);
  });

  it('gift_card_codes: only pulls of those gift cards are hit', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'error_after_issue', gift_card_codes: ['ACME-BOOKS-FIXED'] });
    expect((await pullSync(sim, 'NOVA-GAMES-FREE', 1000)).status).toBe(200);
    expect((await pullSync(sim, 'ACME-BOOKS-FIXED', 1000)).status).toBe(500);
  });

  it('request_ids: only those request IDs are hit', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', request_ids: ['doomed'] });
    expect((await pullSync(sim, 'FAST-FREE', 100, 'fine')).status).toBe(200);
    expect((await pullSync(sim, 'FAST-FREE', 100, 'doomed')).status).toBe(503);
    expect((await createPullRequest(sim, 'FAST-FREE', 100, 'doomed')).status).toBe(503);
  });

  it('the first matching fault applies; removing it lets the next one through', async () => {
    const first = await sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 502 });
    await sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 504 });
    expect((await pullSync(sim, 'FAST-FREE', 100)).status).toBe(502);
    await sim.control.removeFault(first);
    expect((await pullSync(sim, 'FAST-FREE', 100)).status).toBe(504);
    await sim.control.clearFaults();
    expect(await sim.control.faults()).toEqual([]);
  });
});

describe('Control API: fault specs are validated (400 bad_request on nonsense)', () => {
  it.each([
    ['unknown mode', { endpoint: 'cards', mode: 'explode' }],
    ['unknown endpoint', { endpoint: 'balance', mode: 'latency' }],
    ['share above 1', { endpoint: 'cards', mode: 'latency', share: 2 }],
    ['times 0', { endpoint: 'cards', mode: 'latency', times: 0 }],
    ['negative latency', { endpoint: 'cards', mode: 'latency', latency_ms: -1 }],
    ['a status that is not HTTP', { endpoint: 'cards', mode: 'error_before_issue', status: 42 }],
    ['an unknown field', { endpoint: 'cards', mode: 'latency', lattency_ms: 5 }],
    ['come_back_later on polls', { endpoint: 'pull_request_status', mode: 'come_back_later' }],
    ['async_error on sync pulls', { endpoint: 'cards', mode: 'async_error' }],
  ])('%s', async (_what, spec) => {
    await expect(sim.control.addFault(spec as never)).rejects.toThrow(/answered 400.*bad_request/);
  });
});
