import { randomBytes } from 'node:crypto';
import { testPool } from '@cardpull/testing';
import { reencryptCards } from '@cardpull/orders';
import { Vault } from '@cardpull/vault';
import { createOrder, useStack, waitForOrder } from '../support/stack';

describe('card vault key rotation: a command re-encrypts every card with the active key', () => {
  const stack = useStack();

  it('re-seals cards under the new first key (and seals PDF links stored in clear before); codes, PINs and links still read the same; re-running is a no-op', async () => {
    const ids = [];
    for (const amount of [1000, 2500, 5000]) ids.push((await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount })).id);
    const before = await Promise.all(ids.map((id) => waitForOrder(stack, id)));
    // A card stored before the PDF link was sealed: its link in clear, no pdf_enc.
    const legacy = await stack.call('GET', `/v1/orders/${ids[0]}`);
    const legacyPdf: string = legacy.body.order.card.pdf_url;
    const setup = testPool(stack.db.url, 1);
    await setup.query('UPDATE cards SET pdf_url = $2, pdf_enc = NULL WHERE order_id = $1', [ids[0], legacyPdf]);
    await setup.end();
    expect((await stack.call('GET', `/v1/orders/${ids[0]}`)).body.order.card.pdf_url).toBe(legacyPdf);
    const oldKey = stack.config.CARD_ENCRYPTION_KEYS[0]!;
    const newKey = { id: 'k-2027', key: randomBytes(32) };
    const rotated = new Vault([newKey, oldKey]);
    const pool = testPool(stack.db.url, 2);
    try {
      const first = await reencryptCards(pool, rotated, 2);
      expect(first.reencrypted).toBe(3);
      const again = await reencryptCards(pool, rotated, 2);
      expect(again).toEqual({ reencrypted: 0, alreadyActive: 3 });
      const { rows } = await pool.query('SELECT DISTINCT key_id FROM cards');
      expect(rows).toEqual([{ key_id: 'k-2027' }]);
      // Only the new key is needed from now on.
      const onlyNew = new Vault([newKey]);
      const { rows: cards } = await pool.query('SELECT c.id, c.key_id, c.code_enc, c.pin_enc, c.pdf_enc, c.pdf_url, c.order_id FROM cards c');
      for (const c of cards) {
        const original = before.find((o) => o.id === c.order_id)!.card;
        expect(onlyNew.open({ keyId: c.key_id, blob: c.code_enc }, `card/${c.id}/code/order/${c.order_id}`)).toBe(original.code);
        expect(onlyNew.open({ keyId: c.key_id, blob: c.pin_enc }, `card/${c.id}/pin/order/${c.order_id}`)).toBe(original.pin_code);
        // The PDF link too, the legacy one included: sealed, and no longer in clear.
        expect([c.pdf_url, onlyNew.open({ keyId: c.key_id, blob: c.pdf_enc }, `card/${c.id}/pdf/order/${c.order_id}`)]).toEqual([null, original.pdf_url]);
      }
    } finally {
      await pool.end();
    }
  });
});
