import { Client } from 'pg';
import { waitFor } from '@cardpull/testing';
import { createOrder, startStack, waitForOrder, type Stack } from '../support/stack';

/**
 * unauthorized / invalid_signature: our credentials are wrong. Nothing is failed: the circuit opens, the
 * queue pauses, an alert is logged and the state is kept; once the partner accepts us again (an operator
 * fixed the setting and restarted the worker), the probe closes the circuit and the orders resume.
 */
describe('credential failures open the partner circuit; orders resume when fixed', () => {
  let api: Stack;
  beforeEach(async () => {
    api = await startStack({ worker: false });
  });
  afterEach(() => api?.close());

  it.each([
    ['invalid_signature', { PARTNER_SHARED_KEY: 'ab'.repeat(32) }],
    ['unauthorized', { PARTNER_API_KEY: 'not-the-right-key' }],
  ])('%s: orders wait (not failed), the circuit is open, then everything completes', async (code, badEnv) => {
    const shared = { db: api.db, sim: api.sim, api: false, env: { REDIS_PREFIX: api.env.REDIS_PREFIX } };
    const broken = await startStack({ ...shared, env: { ...shared.env, ...badEnv } });
    const orders = [
      await createOrder(api, { gift_card_code: 'FAST-FREE', amount: 111 }),
      await createOrder(api, { gift_card_code: 'FAST-FREE', amount: 222, mode: 'async' }),
    ];
    const pg = new Client({ connectionString: api.db.url });
    await pg.connect();
    try {
      await waitFor('the circuit to open', async () => (await pg.query("SELECT 1 FROM partner_circuit WHERE state = 'open'")).rowCount);
      const circuit = (await pg.query('SELECT last_error_code FROM partner_circuit')).rows[0];
      expect(circuit.last_error_code).toBe(code);
      expect(await api.redis.client.exists(`${api.env.REDIS_PREFIX}:orders:meta`)).toBe(1);
      expect(await broken.worker!.get((await import('@cardpull/orders')).OrderQueue).isPaused()).toBe(true);
      expect(broken.logs.text).toContain('partner_credentials_refused');
      await new Promise((r) => setTimeout(r, 600));
      for (const o of orders) {
        const { body } = await api.call('GET', `/v1/orders/${o.id}`);
        expect(['pending', 'in_progress']).toContain(body.order.status);
        expect(body.order.error).toBeNull();
      }
      await broken.close();
      // The operator fixes the setting and restarts the worker.
      const fixed = await startStack(shared);
      try {
        for (const o of orders) {
          const done = await waitForOrder(api, o.id);
          expect(done.status).toBe('completed');
          expect(done.attempts.map((a: any) => a.request_id)).toEqual([o.requestId]);
        }
        expect((await pg.query('SELECT state FROM partner_circuit')).rows[0].state).toBe('closed');
      } finally {
        await fixed.close();
      }
    } finally {
      await pg.end();
      await broken.close().catch(() => undefined);
    }
  });
});
