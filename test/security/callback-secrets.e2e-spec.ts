import { Client } from 'pg';
import { waitFor } from '@cardpull/testing';
import { startReceiver } from '../support/receiver';
import { KEYS, idemKey, useStack } from '../support/stack';

const WRITER = 'shop-writer-key-01';
const masked = (secret: string) => `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}`;

/**
 * Card secrets go to those allowed, decided per API key, not per client (issue 11, openings 1 and 3):
 *  - a callback carries the card's code, PIN and PDF link only when the key that CREATED the order has
 *    cards:read; a write-only key of a client whose other key reads cards gets them masked;
 *  - the PDF link is sealed at rest with code and PIN: nothing in the cards table shows it in clear.
 */
describe('security: callbacks carry card secrets by the scope of the key that created the order; the PDF link is sealed at rest', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());
  const stack = useStack({
    env: {
      // The shop has two keys: KEYS.shop (every scope) and a write-only one (orders:write + orders:read).
      API_KEYS: `shop:${KEYS.shop},shop:${WRITER}:orders:write+orders:read,nocards:${KEYS.noCards}:orders:write+orders:read`,
      CALLBACK_SECRETS: 'shop:shop-callback-secret-0001',
    },
  });

  async function orderWithCallback(key: string) {
    const res = await stack.call('POST', '/v1/orders?wait=20', {
      key,
      body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, callback_url: `${receiver.url}/hooks` },
      headers: { 'idempotency-key': idemKey('cb-scope') },
    });
    expect([res.status, res.body.order?.status]).toEqual([202, 'completed']);
    const requestId: string = res.body.order.attempts[0].request_id;
    const [card] = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
    const callback = await waitFor('the callback', () => receiver.received.find((r) => r.json?.order?.id === res.body.order.id)?.json);
    return { card: card!, callback, pdf: `${stack.sim.baseUrl}/cards/${card!.id}.pdf` };
  }

  it('an order created by the write-only key: its callback has the card masked, although another key of the client reads cards', async () => {
    const { card, callback, pdf } = await orderWithCallback(WRITER);
    expect(callback.order.card).toMatchObject({ id: card.id, code: masked(card.code), pin_code: '****', pdf_url: masked(pdf) });
    const text = JSON.stringify(callback);
    expect({ code: text.includes(card.code), pin: text.includes(`"${card.pin_code}"`), pdf: text.includes(`/cards/${card.id}.pdf`) }).toEqual({ code: false, pin: false, pdf: false });
  });

  it('an order created by the key with cards:read: its callback carries code, PIN and PDF link (the control)', async () => {
    const { card, callback, pdf } = await orderWithCallback(KEYS.shop);
    expect(callback.order.card).toMatchObject({ id: card.id, code: card.code, pin_code: card.pin_code, pdf_url: pdf });
  });

  it('the PDF link is stored sealed: no row of the cards table shows it in clear', async () => {
    const { card } = await orderWithCallback(KEYS.shop);
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      const { rows } = await pg.query(`SELECT pdf_url, encode(pdf_enc, 'escape') AS sealed, pdf_enc IS NOT NULL AS has_sealed FROM cards WHERE partner_card_id = $1`, [card.id]);
      expect(rows).toHaveLength(1);
      expect(rows[0].pdf_url).toBeNull();
      expect(rows[0].has_sealed).toBe(true);
      expect(String(rows[0].sealed)).not.toContain(`/cards/${card.id}.pdf`);
    } finally {
      await pg.end();
    }
  });
});
