import { StepsRepository } from '@cardpull/orders';
import { waitFor, type FaultSpecInput } from '@cardpull/testing';
import { DecisionApplier } from '../../apps/worker/src/steps/decision-applier.service';
import { startReceiver } from '../support/receiver';
import { KEYS, idemKey, useStack, waitForOrder } from '../support/stack';

/** A second key of the shop that reads orders but not cards. */
const SHOP_READER = 'shop-reader-key-0001';
const masked = (secret: string) => (secret.length <= 4 ? '****' : `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}`);

/**
 * Cards the partner issued for an order that are not its card (a surplus second card, a card that does not
 * match the order) are kept for a refund or reuse: they are not the client's to redeem. The Order resource
 * (the POST answer, GET, the list) and its callbacks list them in `other_cards` always masked, with their
 * role and `held: true`, even for a key with cards:read; the order's own card stays in clear for that key.
 */
describe('security: cards held for a refund or reuse are never handed to the client in clear', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());
  const stack = useStack({
    env: {
      API_KEYS: `shop:${KEYS.shop},shop:${SHOP_READER}:orders:read`,
      CALLBACK_SECRETS: 'shop:shop-callback-secret-0001', RECONCILE_INTERVAL_MS: '3600000',
    },
  });
  afterEach(() => stack.sim.control.clearFaults());

  it('a mismatched card (with PIN and PDF link): masked with its role in the GET, the list, the replayed POST and the needs_attention callback of a cards:read key', async () => {
    // ACME-BOOKS-FIXED has PINs; the partner issues a card of 1100 for an order of 1000.
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'wrong_card', amount_delta: 100, gift_card_codes: ['ACME-BOOKS-FIXED'], times: 1 } as FaultSpecInput);
    const body = { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, callback_url: `${receiver.url}/hooks` };
    const key = idemKey('held-mismatch');
    const created = await stack.call('POST', '/v1/orders', { body, headers: { 'idempotency-key': key } });
    expect(created.status).toBe(202);
    const id: string = created.body.order.id;
    const requestId: string = created.body.order.attempts[0].request_id;
    await waitForOrder(stack, id);
    const [issued] = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId);
    expect(issued?.pin_code).toEqual(expect.any(String));
    const pdf = `${stack.sim.baseUrl}/cards/${issued!.id}.pdf`;
    const expected = {
      id: issued!.id,
      code: masked(issued!.code),
      pin_code: '****',
      pdf_url: masked(pdf),
      expire_at: expect.any(String),
      amount: 1100,
      gift_card_code: 'ACME-BOOKS-FIXED',
      role: 'mismatch',
      request_id: requestId,
      mismatch: 'amount 1100 instead of 1000',
      held: true,
    };

    const got = await stack.call('GET', `/v1/orders/${id}`); // KEYS.shop: every scope, cards:read included
    const replay = await stack.call('POST', '/v1/orders', { body, headers: { 'idempotency-key': key } });
    const list = await stack.call('GET', '/v1/orders?status=needs_attention');
    const callback = await waitFor('the needs_attention callback', () => receiver.received.find((r) => r.json?.order?.id === id && r.json.type === 'order.needs_attention')?.json);
    const answers = { get: got.body.order, replay: replay.body.order, list: list.body.orders.find((o: { id: string }) => o.id === id), callback: callback.order };
    expect([got.status, replay.status]).toEqual([200, 200]);
    for (const [where, order] of Object.entries(answers)) {
      expect({ where, status: order.status, card: order.card, other_cards: order.other_cards }).toEqual({ where, status: 'needs_attention', card: null, other_cards: [expected] });
      const text = JSON.stringify(order);
      expect({ where, code: text.includes(issued!.code), pin: text.includes(`"${issued!.pin_code}"`), pdf: text.includes(`/cards/${issued!.id}.pdf`) }).toEqual({ where, code: false, pin: false, pdf: false });
    }
  });

  it('a surplus card beside the order’s own card: the own card is clear for cards:read, the surplus masked and held; both masked without cards:read', async () => {
    const created = await stack.call('POST', '/v1/orders?wait=20', { body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 }, headers: { 'idempotency-key': idemKey('held-surplus') } });
    expect(created.body.order.status).toBe('completed');
    const id: string = created.body.order.id;
    const [own] = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === created.body.order.attempts[0].request_id);
    // A second card for the completed order, as the worker stores one (a request ID declared dead that yields late).
    const current = (await stack.worker!.get(StepsRepository).current(id))!;
    const second = { id: `surplus-${id}`, code: 'SURPLUSCODE00077', pin_code: '246810', expire_at: '2027-01-01T00:00:00.000+00:00', amount: 2500, gift_card_code: 'ACME-BOOKS-FIXED', pdf_url: 'https://partner.example/cards/surplus-77.pdf' };
    const stored = await stack.worker!.get(DecisionApplier).apply(current.order, current.attempt, { kind: 'store_card', rule: 'card', card: second, mismatch: null, attempt: { state: 'succeeded', partnerStatus: 'issued' } });
    expect(stored.cardRole).toBe('surplus');

    const order = (await stack.call('GET', `/v1/orders/${id}`)).body.order;
    expect(order.card).toMatchObject({ id: own!.id, code: own!.code, pin_code: own!.pin_code, pdf_url: `${stack.sim.baseUrl}/cards/${own!.id}.pdf` });
    expect(order.other_cards).toEqual([
      expect.objectContaining({ id: second.id, code: masked(second.code), pin_code: '****', pdf_url: masked(second.pdf_url), role: 'surplus', mismatch: null, held: true }),
    ]);
    const text = JSON.stringify(order);
    expect({ code: text.includes(second.code), pin: text.includes(second.pin_code), pdf: text.includes(second.pdf_url) }).toEqual({ code: false, pin: false, pdf: false });

    // The same order read by a key of the same client without cards:read: both masked.
    const seen = (await stack.call('GET', `/v1/orders/${id}`, { key: SHOP_READER })).body.order;
    expect(seen.card).toMatchObject({ code: masked(own!.code), pin_code: '****' });
    expect(seen.other_cards).toEqual([expect.objectContaining({ id: second.id, code: masked(second.code), pin_code: '****', held: true })]);
  });

});
