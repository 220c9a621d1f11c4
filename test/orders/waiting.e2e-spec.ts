import { expectInvariants } from '@cardpull/testing';
import { createOrder, startStack, useStack, waitForOrder } from '../support/stack';

/** out_of_stock / not_enough_funds: the order waits (new request ID when it can go on), or fails at the deadline. */
describe('waiting instead of failing: awaiting_stock and awaiting_funds', () => {
  const stack = useStack({ beforeClose: expectInvariants });
  afterEach(async () => {
    await stack.sim.control.setStock('ACME-BOOKS-FIXED', 200, 5000);
    await stack.sim.control.setBalance(1_000_000);
  });

  it.each(['sync', 'async'])('out_of_stock (%s) -> awaiting_stock, then resumed with a NEW request ID when stock returns', async (mode) => {
    await stack.sim.control.setStock('ACME-BOOKS-FIXED', 0, 5000);
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 5000, mode });
    const waiting = await waitForOrder(stack, id, (o) => o.status === 'awaiting_stock');
    expect(waiting.error).toEqual({ code: 'out_of_stock', message: expect.any(String) });
    expect(waiting.attempts).toEqual([expect.objectContaining({ request_id: requestId, state: 'failed_definitive', partner_status: 'out_of_stock' })]);
    await stack.sim.control.setStock('ACME-BOOKS-FIXED', 3, 5000);
    const done = await waitForOrder(stack, id);
    expect(done.status).toBe('completed');
    expect(done.error).toBeNull();
    expect(done.attempts).toHaveLength(2);
    expect(done.attempts[1].request_id).not.toBe(requestId);
  });

  it('not_enough_funds -> awaiting_funds, then resumed when the balance allows', async () => {
    await stack.sim.control.setBalance(1);
    const { id } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 20000 });
    const waiting = await waitForOrder(stack, id, (o) => o.status === 'awaiting_funds');
    expect(waiting.error.code).toBe('not_enough_funds');
    await stack.sim.control.setBalance(1000);
    const done = await waitForOrder(stack, id);
    expect(done.status).toBe('completed');
    expect(done.attempts).toHaveLength(2);
  });

  it('orders waiting at once share the partner reads: one GET /balance per re-check round, not one per order', async () => {
    await stack.sim.control.setBalance(1);
    const ids = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => (await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 20000 + 100 * i })).id),
    );
    for (const id of ids) await waitForOrder(stack, id, (o) => o.status === 'awaiting_funds');
    const balanceReads = async () => (await stack.sim.control.ledger()).requests.filter((r) => r.method === 'GET' && r.path === '/partners/v1/balance').length;
    const before = await balanceReads();
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    const reads = (await balanceReads()) - before;
    // 12 orders re-checked every AWAIT_RECHECK_INTERVAL_MS: one call per order would be 12 per round. A shared
    // read is fresh for half an interval, so on a loaded machine the 12 checks of one round may spread over two
    // of them: at most 2 reads a round (it was 14 for 11 rounds in one loaded run).
    const rounds = Math.ceil((Date.now() - started) / stack.config.AWAIT_RECHECK_INTERVAL_MS);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(2 * rounds + 1);
    await stack.sim.control.setBalance(10_000);
    for (const id of ids) expect((await waitForOrder(stack, id)).status).toBe('completed');
  });

  it('a waiting order fails at AWAIT_DEADLINE_MS with the partner’s reason', async () => {
    const short = await startStack({ env: { AWAIT_DEADLINE_MS: '1000' } });
    try {
      const { id } = await createOrder(short, { gift_card_code: 'SOLD-OUT-FIXED', amount: 1000 });
      const order = await waitForOrder(short, id, undefined, 10_000);
      expect(order.status).toBe('failed');
      expect(order.error.code).toBe('out_of_stock');
      expect(order.error.message).toMatch(/deadline/);
      expect(order.attempts).toHaveLength(1);
      await expectInvariants(short);
    } finally {
      await short.close();
    }
  });
});
