import { waitFor } from '@cardpull/testing';
import { idemKey, useStack } from '../support/stack';

describe('smoke: a sync and an async order complete with a card', () => {
  const stack = useStack();

  it.each(['sync', 'async'])('%s order', async (mode) => {
    const res = await stack.call('POST', '/v1/orders', {
      body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500, mode },
      headers: { 'idempotency-key': idemKey() },
    });
    expect(res.status).toBe(202);
    const id = res.body.order.id;
    const done = await waitFor('completion', async () => {
      const r = await stack.call('GET', `/v1/orders/${id}`);
      return r.body.order.status === 'completed' ? r.body.order : null;
    });
    expect(done.card.code).toMatch(/^[A-Z0-9]{16}$/);
  });
});
