import { Client } from 'pg';
import type { FaultSpecInput } from '@cardpull/testing';
import { expectInvariants } from '@cardpull/testing';
import { createOrder, useStack, waitForOrder } from '../support/stack';

/**
 * Hole 4 of the money-safety review: the card received is checked against the order. A card for another
 * amount (or gift card) is not the card ordered: it is stored (the partner billed it), shown on the order,
 * and the order goes to needs_attention with reason card_mismatch, never completed with it.
 */
describe('a card that does not match its order is kept, shown, and the order needs attention', () => {
  const stack = useStack({ beforeClose: expectInvariants });
  afterEach(() => stack.sim.control.clearFaults());

  it.each(['sync', 'async'] as const)('%s: a card for a different amount -> needs_attention (card_mismatch), the card stored and listed on the order', async (mode) => {
    await stack.sim.control.addFault({ endpoint: mode === 'sync' ? 'cards' : 'pull_requests', mode: 'wrong_card', amount_delta: 100, gift_card_codes: ['FAST-FREE'], times: 1 } as FaultSpecInput);
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: mode === 'sync' ? 2000 : 2100, mode });
    const order = await waitForOrder(stack, id);
    const issued = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
    expect(issued).toHaveLength(1);
    expect(issued[0]!.amount).toBe(order.amount + 100);
    expect(order.status).toBe('needs_attention');
    expect(order.error).toEqual({ code: 'card_mismatch', message: expect.stringContaining(`amount ${order.amount + 100} instead of ${order.amount}`) });
    expect(order.card).toBeNull();
    expect(order.other_cards).toEqual([
      // Held for a refund or reuse: masked, even for the shop's cards:read key.
      expect.objectContaining({ id: issued[0]!.id, code: `${'*'.repeat(issued[0]!.code.length - 4)}${issued[0]!.code.slice(-4)}`, amount: order.amount + 100, role: 'mismatch', request_id: requestId, held: true }),
    ]);
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      const { rows } = await pg.query('SELECT role, mismatch FROM cards WHERE partner_card_id = $1', [issued[0]!.id]);
      expect(rows).toEqual([{ role: 'mismatch', mismatch: `amount ${order.amount + 100} instead of ${order.amount}` }]);
    } finally {
      await pg.end();
    }
  });
});
