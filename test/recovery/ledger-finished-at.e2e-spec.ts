import { randomUUID } from 'node:crypto';
import { waitFor } from '@cardpull/testing';
import { startSimulator, type SimHandle } from '../support/simulator';

/**
 * The recovery suites read "was this request ID sent twice at once?" from the simulator's ledger: `at`
 * (arrival) and `finished_at` (no longer in flight). These are the meanings they rely on.
 */
describe('Simulator ledger: finished_at says when a partner request stopped being in flight', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterAll(() => sim?.close());
  afterEach(() => sim.control.clearFaults());

  const pull = (requestId: string, timeoutMs?: number) =>
    sim.request({
      method: 'POST',
      path: '/partners/v1/cards',
      body: { card: { amount: 1000, gift_card_code: 'FAST-FREE' } },
      headers: { 'x-requestid': requestId },
      timeoutMs,
    });
  const entryOf = async (requestId: string) => (await sim.control.ledger()).requests.find((r) => r.request_id === requestId)!;
  const span = (r: { at: string; finished_at: string | null }) => Date.parse(r.finished_at!) - Date.parse(r.at);

  it('an answered request: when its answer was written, after the partner took its time', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'latency', latency_ms: 300 });
    const id = randomUUID();
    expect((await pull(id)).status).toBe(200);
    const entry = await entryOf(id);
    expect(entry.status).toBe(200);
    expect(span(entry)).toBeGreaterThanOrEqual(300);
    expect(span(entry)).toBeLessThan(1_000);
  });

  it('a held answer (hang): null while the client waits, then when the client gave up, not when the answer was due', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'hang', latency_ms: 60_000 });
    const id = randomUUID();
    const call = pull(id, 1_000).catch((e: Error) => e);
    await waitFor('the request to arrive', () => entryOf(id), 5_000, 10);
    expect((await entryOf(id)).finished_at).toBeNull();
    expect(await call).toBeInstanceOf(Error);
    const entry = await waitFor('finished_at', async () => ((await entryOf(id)).finished_at ? entryOf(id) : null), 5_000, 10);
    expect(span(entry)).toBeGreaterThanOrEqual(900);
    expect(span(entry)).toBeLessThan(5_000);
    // The card was issued all the same: only the answer was lost.
    expect((await sim.control.ledger()).cards.filter((c) => c.request_id === id)).toHaveLength(1);
  });

  it('a reset connection: when the partner destroyed it, with no status', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'reset' });
    const id = randomUUID();
    expect(await pull(id).catch((e: Error) => e)).toBeInstanceOf(Error);
    const entry = await waitFor('finished_at', async () => ((await entryOf(id)).finished_at ? entryOf(id) : null), 5_000, 10);
    expect(entry.status).toBeNull();
    expect(span(entry)).toBeLessThan(500);
  });
});
