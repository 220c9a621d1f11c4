import { randomBytes } from 'node:crypto';
import { KEYS, createOrder, startStack, useStack, waitForOrder } from '../support/stack';
import { scrape, valueOf } from '../observability/support';

/**
 * A card sealed with a key no longer in CARD_ENCRYPTION_KEYS (removed too early in a rotation) is a fault
 * to show, not a crash (issue 11, opening 8): the order is answered (200) with its card marked unreadable
 * and the reason, never a 500, and never anything of the card's secrets; the gauge
 * cardpull_cards_unreadable counts such cards, so the fault is seen before a caller asks.
 */
describe('security: an order whose card key was removed is answered, with the card marked unreadable', () => {
  const stack = useStack();

  it('GET /v1/orders/:id answers 200, the card unreadable with the reason; the other fields as they are', async () => {
    const { id } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 });
    const done = await waitForOrder(stack, id);
    expect(done.card.code).toEqual(expect.any(String));
    const oldKeyId = stack.config.CARD_ENCRYPTION_KEYS[0]!.id;
    // Another API on the same database whose keys no longer hold the one that sealed the card.
    const rotated = await startStack({ worker: false, db: stack.db, sim: stack.sim, env: { CARD_ENCRYPTION_KEYS: `k-new:${randomBytes(32).toString('base64')}` } });
    try {
      {
        const res = await rotated.call('GET', `/v1/orders/${id}`, { key: KEYS.shop });
        expect([res.status, res.body.order?.status]).toEqual([200, 'completed']);
        expect(res.body.order.card).toEqual({
          id: done.card.id,
          code: null,
          pin_code: null,
          pdf_url: null,
          expire_at: done.card.expire_at,
          amount: done.card.amount,
          gift_card_code: done.card.gift_card_code,
          unreadable: `sealed with key "${oldKeyId}", which is not in CARD_ENCRYPTION_KEYS: put it back (after the new one) and run npm run vault:reencrypt`,
        });
      }
      expect(valueOf((await scrape(rotated.apiUrl)).samples, 'cardpull_cards_unreadable')).toBe(1);
      expect(valueOf((await scrape(stack.apiUrl)).samples, 'cardpull_cards_unreadable')).toBe(0);
    } finally {
      await rotated.close();
    }
  });
});
