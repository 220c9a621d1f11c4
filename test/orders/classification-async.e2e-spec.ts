import type { FaultSpecInput } from '@cardpull/testing';
import { expectInvariants } from '@cardpull/testing';
import { createOrder, insertOrder, useStack, waitForOrder } from '../support/stack';

/** ARCHITECTURE.md "Partner calls and their classification", each row through the whole service (async pulls). */
describe('classification of async pull answers', () => {
  const stack = useStack({ env: { ASYNC_MAX_ATTEMPTS: '3' }, beforeClose: expectInvariants });
  afterEach(() => stack.sim.control.clearFaults());

  const partnerCalls = async (requestId: string) =>
    (await stack.sim.control.ledger()).requests.filter((r) => r.request_id === requestId).map((r) => `${r.method} ${r.status}`);
  /** An async order placed while pull request creations for its gift card meet `fault`; returns it once it has ended. */
  async function asyncOrderMeeting(fault: Omit<FaultSpecInput, 'endpoint' | 'gift_card_codes'>, body: { gift_card_code: string; amount: number }) {
    await stack.sim.control.addFault({ endpoint: 'pull_requests', gift_card_codes: [body.gift_card_code], ...fault } as FaultSpecInput);
    const { id, requestId } = await createOrder(stack, { ...body, mode: 'async' });
    return { order: await waitForOrder(stack, id), requestId };
  }

  it('status success -> card stored and order completed; polled with the same request ID', async () => {
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'EURO-TRAVEL-REGION', amount: 2000, mode: 'async' });
    const order = await waitForOrder(stack, id);
    expect(order).toMatchObject({ status: 'completed', mode: 'async' });
    expect(order.attempts).toEqual([expect.objectContaining({ request_id: requestId, kind: 'async', state: 'succeeded', partner_status: 'success' })]);
    const calls = await partnerCalls(requestId);
    expect(calls[0]).toBe('POST 200');
    expect(calls.filter((c) => c.startsWith('GET')).length).toBeGreaterThanOrEqual(1);
  });

  it('422 unprocessable_entity on creation (our earlier create reached the partner) -> poll that request ID', async () => {
    await stack.stopWorker();
    try {
      const { id, requestId } = await insertOrder(stack, { giftCardCode: 'NOVA-GAMES-FREE', amount: 700, mode: 'async' });
      // The partner already has this request ID, as if our first create had reached it and its answer was lost.
      const pre = await stack.sim.request({ method: 'POST', path: '/partners/v1/pull_requests', body: { pull_request: { amount: 700, gift_card_code: 'NOVA-GAMES-FREE', request_id: requestId } } });
      expect(pre.status).toBe(200);
      await stack.startWorker();
      const order = await waitForOrder(stack, id);
      expect(order.status).toBe('completed');
      expect(order.attempts.map((a: any) => a.request_id)).toEqual([requestId]);
      expect((await partnerCalls(requestId)).slice(0, 2)).toEqual(['POST 200', 'POST 422']);
      expect((await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId)).toHaveLength(1);
    } finally {
      if (!stack.worker) await stack.startWorker();
    }
  });

  it('404 pull_request_not_found when polling an ID whose creation was never acknowledged -> create again, same ID', async () => {
    const { order, requestId } = await asyncOrderMeeting({ mode: 'error_before_issue', status: 503, times: 1 }, { gift_card_code: 'FAST-FREE', amount: 333 });
    expect(order.status).toBe('completed');
    expect(order.attempts.map((a: any) => a.request_id)).toEqual([requestId]);
    const calls = await partnerCalls(requestId);
    expect(calls[0]).toBe('POST 503');
    expect(calls).toContain('GET 404');
    expect(calls.filter((c) => c === 'POST 200')).toHaveLength(1);
  });

  it('a lost creation answer (connection reset after the partner created it) -> polling finds it', async () => {
    const { order, requestId } = await asyncOrderMeeting({ mode: 'reset', times: 1 }, { gift_card_code: 'FAST-FREE', amount: 444 });
    expect(order.status).toBe('completed');
    expect(order.attempts).toHaveLength(1);
    expect((await partnerCalls(requestId)).filter((c) => c.startsWith('POST'))).toHaveLength(1);
  });

  it('async status error -> a new attempt with a NEW request ID, committed before its call', async () => {
    const { order, requestId } = await asyncOrderMeeting({ mode: 'async_error', times: 1 }, { gift_card_code: 'NOVA-GAMES-FREE', amount: 900 });
    expect(order.status).toBe('completed');
    expect(order.attempts).toHaveLength(2);
    expect(order.attempts[0]).toMatchObject({ request_id: requestId, state: 'failed_definitive', partner_status: 'error' });
    expect(order.attempts[1]).toMatchObject({ state: 'succeeded' });
    expect(order.attempts[1].request_id).not.toBe(requestId);
    // Committed (created_at, the transaction's time) before the partner first saw it.
    const firstCall = (await stack.sim.control.ledger()).requests.find((r) => r.method === 'POST' && r.request_id === order.attempts[1].request_id)!;
    expect(Date.parse(order.attempts[1].created_at)).toBeLessThanOrEqual(Date.parse(firstCall.at));
  });

  it('async status error ASYNC_MAX_ATTEMPTS times -> failed with pull_request_error', async () => {
    const { order } = await asyncOrderMeeting({ mode: 'async_error' }, { gift_card_code: 'EURO-TRAVEL-REGION', amount: 5000 });
    expect(order.status).toBe('failed');
    expect(order.error.code).toBe('pull_request_error');
    expect(order.attempts).toHaveLength(3);
    expect(new Set(order.attempts.map((a: any) => a.request_id)).size).toBe(3);
    expect(order.attempts.every((a: any) => a.state === 'failed_definitive')).toBe(true);
  });

  it('a poll that learns nothing writes nothing to Postgres (the job re-delays itself)', async () => {
    await stack.sim.control.addFault({ endpoint: 'pull_requests', mode: 'latency', latency_ms: 1500, gift_card_codes: ['FAST-FREE'], times: 1 });
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 555, mode: 'async' });
    const { Client } = await import('pg');
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      const read = async () => (await pg.query('SELECT o.updated_at AS o, a.updated_at AS a FROM orders o JOIN attempts a ON a.order_id = o.id WHERE o.id = $1', [id])).rows[0];
      await waitForOrder(stack, id, (o) => o.attempts[0].partner_status === 'processing');
      const before = await read();
      const polls = async () => (await stack.sim.control.ledger()).requests.filter((r) => r.method === 'GET' && r.request_id === requestId).length;
      const pollsBefore = await polls();
      await new Promise((r) => setTimeout(r, 500));
      const after = await read();
      expect(await polls()).toBeGreaterThan(pollsBefore);
      expect(after).toEqual(before);
    } finally {
      await pg.end();
    }
    expect((await waitForOrder(stack, id)).status).toBe('completed');
  });
});
