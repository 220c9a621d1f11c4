import { Client } from 'pg';
import type { LedgerRequest } from '@cardpull/sim-contract';
import { expectInvariants, waitFor } from '@cardpull/testing';
import { createOrder, useStack, waitForOrder } from '../support/stack';
import { scrape, valueOf, workerUrl } from '../observability/support';
import { ADMIN_ENV, ALICE, adminCall, login } from '../admin/support/admin';

/**
 * Partner time (ARCHITECTURE.md "Partner time"): a partner whose clock is 2 minutes ahead of ours and that
 * accepts 30 s of Timestamp skew, answering `invalid_signature` to a stale Timestamp, must not stop every
 * order. The client reads the partner's clock from the Date header of its answers and signs with it; a 401
 * whose Date shows our time was off is re-sent once, signed with the partner's time, before it counts as a
 * credentials failure (which opens the fleet-wide partner circuit).
 */
describe('a partner 2 minutes ahead with a 30 s window: orders complete, the partner circuit stays closed', () => {
  const stack = useStack({ env: ADMIN_ENV, beforeClose: expectInvariants });

  it('sync and async orders complete with their first request ID; each refused call was re-sent once and accepted; later calls are signed right at once', async () => {
    await stack.sim.control.setClock({ offset_s: 120, window_s: 30, stale_timestamp_code: 'invalid_signature' });
    const since = new Date();
    const orders = [
      await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 321 }),
      await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 654, mode: 'async' }),
    ];
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      const circuitOpen = async () => (await pg.query("SELECT state, last_error_code FROM partner_circuit WHERE state <> 'closed'")).rows;
      // Until both orders end, or the circuit opens (then no order would move again).
      await waitFor('the orders to end or the circuit to open', async () => {
        if ((await circuitOpen()).length) return true;
        const statuses = await Promise.all(orders.map(async (o) => (await stack.call('GET', `/v1/orders/${o.id}`)).body.order.status));
        return statuses.every((s) => ['completed', 'failed', 'needs_attention'].includes(s));
      }, 15_000);
      expect(await circuitOpen()).toEqual([]);
      for (const o of orders) {
        const done = await waitForOrder(stack, o.id, undefined, 1_000);
        expect({ status: done.status, error: done.error }).toEqual({ status: 'completed', error: null });
        expect(done.attempts.map((a: { request_id: string }) => a.request_id)).toEqual([o.requestId]);
      }

      // Every 401 the partner answered was followed by the same call, re-signed and accepted.
      const requests = (await stack.sim.control.ledger(since)).requests;
      const refused = requests.filter((r) => r.status === 401);
      expect(refused.every((r) => r.auth === 'invalid_signature')).toBe(true);
      for (const r of refused) {
        const next = requests.find((n) => n.method === r.method && n.path === r.path && n.request_id === r.request_id && Date.parse(n.at) >= Date.parse(r.finished_at!) && n.auth === 'ok');
        expect({ refused: r, resentAndAccepted: next !== undefined }).toEqual({ refused: r, resentAndAccepted: true });
      }
      // At most one refusal per call (never a loop of re-signs): told apart by their request ID. (Reads carry
      // none: two processes' balance reads at start, say, are two calls of the same key, each refused once.)
      const keyOf = (r: LedgerRequest) => `${r.method} ${r.path} ${r.request_id}`;
      const pulls = refused.filter((r) => r.request_id);
      expect(new Set(pulls.map(keyOf)).size).toBe(pulls.length);

      // The worker keeps the partner's clock: a later order is signed right the first time.
      const later = new Date();
      const third = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 987 });
      expect((await waitForOrder(stack, third.id, undefined, 15_000)).status).toBe('completed');
      const laterRequests = (await stack.sim.control.ledger(later)).requests;
      expect(laterRequests.filter((r) => r.request_id === third.requestId).map((r) => [r.status, r.auth])).toEqual([[200, 'ok']]);
      expect(laterRequests.filter((r) => r.status === 401)).toEqual([]);

      // What the worker believes, for Prometheus: ~120 s (the Date header has a 1 s resolution).
      const offset = valueOf((await scrape(workerUrl(stack))).samples, 'cardpull_partner_clock_offset_seconds');
      expect(offset).toBeGreaterThan(118);
      expect(offset).toBeLessThan(122);
      // The operations page's partner panel shows the API process's own reading (its balance and inventory reads).
      const page = (await adminCall(stack, 'GET', '/admin', { cookie: await login(stack, ALICE), html: true })).text;
      expect(page).toMatch(/data-partner-clock>Partner clock: \+1(19|20|21)\.\d s from ours/);
    } finally {
      await pg.end();
    }
  });
});
