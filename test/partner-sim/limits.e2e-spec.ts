import { startSimulator, useSimulator } from '../support/simulator';
import { sleep } from '@cardpull/testing';
import { ENVELOPE, balanceOf, get, getPullRequest, pullSync } from './support/partner';

const sim = useSimulator();

/**
 * The simulator enforces a partner's rate limits when told to (issue 12, item 5): per kind of call, requests
 * per second and in flight; beyond them 429 `rate_limited` with Retry-After, before anything is done (no
 * card issued), recorded in the ledger. Other kinds are not limited by a kind's limit; `any` limits them all.
 */
describe('simulator rate limits (PUT /_sim/limits, SIM_LIMITS): 429 with Retry-After beyond them', () => {
  it('create: 2 per second, then 429 with Retry-After and no card; a second later it admits again', async () => {
    await sim.control.setLimits({ create: { per_second: 2, retry_after_s: 3 } });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, `lim-${i}`));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429, 429]);
    expect(answers[2]).toMatchObject(ENVELOPE(429, 'rate_limited', 'too_many_requests'));
    expect(answers[2]!.headers['retry-after']).toBe('3');
    const ledger = await sim.control.ledger();
    expect(ledger.cards.map((c) => c.request_id).sort()).toEqual(['lim-0', 'lim-1']);
    expect(ledger.requests.filter((r) => r.status === 429).map((r) => r.request_id)).toEqual(['lim-2', 'lim-3']);
    // Reads are another kind: not limited by create's limit.
    expect(await balanceOf(sim)).toEqual(expect.any(Number));
    await sleep(1_100);
    expect((await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, 'lim-later')).status).toBe(200);
    expect((await sim.control.limits()).counts.create).toEqual({ admitted: 3, refused: 2, in_flight: 0 });
  });

  it('in flight: with one poll held, a second concurrent poll gets 429; once it is answered, polls are admitted again', async () => {
    await sim.control.setLimits({ poll: { in_flight: 1 } });
    await sim.control.addFault({ endpoint: 'pull_request_status', mode: 'latency', latency_ms: 2_000 });
    const held = getPullRequest(sim, 'nope-1');
    await sleep(100);
    const second = await getPullRequest(sim, 'nope-2');
    expect([second.status, second.headers['retry-after']]).toEqual([429, '1']);
    expect((await held).status).toBe(404);
    await sim.control.clearFaults();
    expect((await getPullRequest(sim, 'nope-3')).status).toBe(404);
  });

  it('any: limits every kind together; a reset restores SIM_LIMITS (none here)', async () => {
    await sim.control.setLimits({ any: { per_second: 1 } });
    expect((await get(sim, '/partners/v1/balance')).status).toBe(200);
    expect((await get(sim, '/partners/v1/gift_cards')).status).toBe(429);
    await sim.control.reset();
    expect((await get(sim, '/partners/v1/gift_cards')).status).toBe(200);
    expect((await sim.control.limits()).limits).toEqual({});
  });

  it('nonsense limits are refused with the reason', async () => {
    await expect(sim.control.setLimits({ create: { per_second: -1 } })).rejects.toThrow(/create\.per_second/);
    await expect(sim.control.setLimits({ writes: { per_second: 1 } } as never)).rejects.toThrow(/400/);
  });

  it('SIM_LIMITS installs limits at start (and after every reset); a bad one stops the simulator naming it', async () => {
    const limited = await startSimulator({ SIM_LIMITS: '{"create":{"per_second":1}}' });
    try {
      expect((await limited.control.limits()).limits).toEqual({ create: { per_second: 1, retry_after_s: 1 } });
      await limited.control.setLimits({});
      await limited.control.reset();
      expect((await limited.control.limits()).limits).toEqual({ create: { per_second: 1, retry_after_s: 1 } });
    } finally {
      await limited.close();
    }
    await expect(startSimulator({ SIM_LIMITS: '{"create":{"per_second":"fast"}}' })).rejects.toThrow(/SIM_LIMITS/);
  });
});
