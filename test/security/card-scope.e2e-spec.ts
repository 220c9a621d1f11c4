import { KEYS, idemKey, useStack } from '../support/stack';

/**
 * Invariant 7: card codes, PINs and PDF links (the link opens the card) are returned only to callers allowed to read cards. A client without
 * `cards:read` (KEYS.noCards: orders:write + orders:read) must see its own card masked on EVERY route that
 * answers with an order: the intake (long-poll and replay), the order (also long-polled) and the list (with
 * each filter), and the real code or PIN must appear nowhere in the answer's text. The shop's key (every
 * scope) on the same routes is the control: there the card is in clear, so the masked answers are the
 * scope's doing, not a missing card.
 */
describe('security: a client without cards:read never receives a card code, PIN or PDF link, on any order route', () => {
  const stack = useStack();

  const BODY = { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 }; // a card with a PIN

  /** Every route that answers with this order, as `key` calls them (the key's own order, created with `idempotencyKey`). */
  async function everyAnswer(key: string, orderId: string, idempotencyKey: string) {
    const routes: [string, string, object?][] = [
      ['POST', '/v1/orders?wait=5', BODY],
      ['POST', '/v1/orders', BODY],
      ['GET', `/v1/orders/${orderId}`],
      ['GET', `/v1/orders/${orderId}?wait=1`],
      ['GET', '/v1/orders'],
      ['GET', '/v1/orders?status=completed'],
      [`GET`, `/v1/orders?gift_card_code=${BODY.gift_card_code}&limit=100`],
    ];
    const answers: { route: string; status: number; text: string; order: any }[] = [];
    for (const [method, path, body] of routes) {
      const res = await stack.call(method, path, { key, body, headers: body ? { 'idempotency-key': idempotencyKey } : {} });
      const order = res.body.order ?? res.body.orders?.find((o: any) => o.id === orderId);
      answers.push({ route: `${method} ${path}`, status: res.status, text: JSON.stringify(res.body), order });
    }
    return answers;
  }

  it('masked everywhere for the client without cards:read; in clear for the shop on the same routes', async () => {
    const cases = [
      { who: 'nocards', key: KEYS.noCards, canRead: false },
      { who: 'shop', key: KEYS.shop, canRead: true },
    ];
    for (const { who, key, canRead } of cases) {
      const idempotencyKey = idemKey(`scope-${who}`);
      const first = await stack.call('POST', '/v1/orders?wait=20', { key, body: BODY, headers: { 'idempotency-key': idempotencyKey } });
      expect([who, first.status, first.body.order?.status]).toEqual([who, 202, 'completed']);
      const orderId: string = first.body.order.id;
      const requestId: string = first.body.order.attempts[0].request_id;
      const [card] = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
      expect(card?.pin_code).toEqual(expect.any(String));
      const answers = [
        { route: 'POST /v1/orders?wait=20 (creation)', status: first.status, text: JSON.stringify(first.body), order: first.body.order },
        ...(await everyAnswer(key, orderId, idempotencyKey)),
      ];

      for (const a of answers) {
        const seen = { who, route: a.route, status: a.status, id: a.order?.card?.id, code: a.order?.card?.code, pin: a.order?.card?.pin_code, pdf: a.order?.card?.pdf_url };
        const pdf = `${stack.sim.baseUrl}/cards/${card!.id}.pdf`;
        const masked = (secret: string) => `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}`;
        const expected = canRead ? { code: card!.code, pin: card!.pin_code, pdf } : { code: masked(card!.code), pin: '****', pdf: masked(pdf) };
        expect(seen).toEqual({ who, route: a.route, status: expect.any(Number), id: card!.id, ...expected });
        expect([a.route, a.status >= 200 && a.status < 300]).toEqual([a.route, true]);
        if (!canRead) {
          const leaked = { code: a.text.includes(card!.code), pin: a.text.includes(`"${card!.pin_code}"`), pdf: a.text.includes(`/cards/${card!.id}.pdf`) };
          expect({ who, route: a.route, ...leaked }).toEqual({ who, route: a.route, code: false, pin: false, pdf: false });
        }
      }
    }
  });
});
