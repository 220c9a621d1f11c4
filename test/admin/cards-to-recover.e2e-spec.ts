import { StepsRepository } from '@cardpull/orders';
import { AdminActions } from '../../apps/api/src/admin/orders/admin-actions.service';
import { DecisionApplier } from '../../apps/worker/src/steps/decision-applier.service';
import type { FaultSpecInput } from '@cardpull/testing';
import { scrape } from '../observability/support';
import { createOrder, useStack, waitForOrder } from '../support/stack';
import { ADMIN_ENV, ALICE, adminCall, login } from './support/admin';

/**
 * Cards the partner billed that are not their order's card are shown to the people on call: a surplus
 * (a second card for an order) and a card that does not match its order (card_mismatch). The page lists
 * them with what is needed to recover them (request ID, partner card id, order) and never their code; the
 * order page shows them masked and offers no re-drive for a mismatch; /metrics counts them.
 */
describe('operations: cards to recover (surplus and mismatch)', () => {
  const stack = useStack({ env: ADMIN_ENV });
  let cookie: string;
  let mismatched: { id: string; requestId: string; card: { id: string; code: string } };
  let surplus: { orderId: string; partnerCardId: string; code: string; requestId: string };

  beforeAll(async () => {
    cookie = await login(stack, ALICE);
    // A card for another amount (the partner's wrong_card fault): needs_attention, card_mismatch.
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'wrong_card', amount_delta: 100, gift_card_codes: ['FAST-FREE'], times: 1 } as FaultSpecInput);
    const m = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1900 });
    const order = await waitForOrder(stack, m.id);
    expect(order.error.code).toBe('card_mismatch');
    // The clear code from the partner's ledger: the order lists the card masked (it is held).
    const issued = (await stack.sim.control.ledger()).cards.find((c) => c.request_id === m.requestId)!;
    expect(order.other_cards).toEqual([expect.objectContaining({ id: issued.id, role: 'mismatch', held: true })]);
    mismatched = { ...m, card: { id: issued.id, code: issued.code } };
    // A completed order that then receives a second card (as the worker would store it).
    const done = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 2000 });
    await waitForOrder(stack, done.id);
    const current = (await stack.worker!.get(StepsRepository).current(done.id))!;
    surplus = { orderId: done.id, partnerCardId: `surplus-${done.id}`, code: 'SURPLUSCODE00042', requestId: done.requestId };
    const card = { id: surplus.partnerCardId, code: surplus.code, pin_code: '9876', expire_at: '2027-01-01T00:00:00.000+00:00', amount: 2000, gift_card_code: 'NOVA-GAMES-FREE', pdf_url: 'u' };
    const stored = await stack.worker!.get(DecisionApplier).apply(current.order, current.attempt, { kind: 'store_card', rule: 'card', card, mismatch: null, attempt: { state: 'succeeded', partnerStatus: 'issued' } });
    expect(stored.cardRole).toBe('surplus');
  });

  it('the operations page lists both, with request ID, partner card id and order, and never their code', async () => {
    const page = await adminCall(stack, 'GET', '/admin', { cookie, html: true });
    expect(page.status).toBe(200);
    const section = page.text.slice(page.text.indexOf('id="cards-to-recover"'));
    expect(section).toContain('(1 surplus, 1 not matching their order)');
    expect(section).toMatch(new RegExp(`data-card="${surplus.partnerCardId}" data-role="surplus"[\\s\\S]*${surplus.requestId}[\\s\\S]*/admin/orders/${surplus.orderId}`));
    expect(section).toMatch(new RegExp(`data-card="${mismatched.card.id}" data-role="mismatch"[\\s\\S]*${mismatched.requestId}[\\s\\S]*amount 2000 instead of 1900`));
    expect(page.text).not.toContain(surplus.code);
    expect(page.text).not.toContain(mismatched.card.code);
  });

  it('the order page shows the other card masked; a card_mismatch order can be marked failed, not re-driven', async () => {
    const page = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie, html: true });
    expect(page.text).toMatch(new RegExp(`data-card="${mismatched.card.id}" data-role="mismatch"`));
    expect(page.text).toContain(`****${mismatched.card.code.slice(-4)}`);
    expect(page.text).not.toContain(mismatched.card.code);
    expect(page.text).toContain('Mark failed');
    expect(page.text).not.toContain('>Re-drive<');
    await expect(stack.api!.get(AdminActions).redrive(mismatched.id, 'alice', 'try')).rejects.toMatchObject({ code: 'not_redrivable' });
    const withSurplus = await adminCall(stack, 'GET', `/admin/orders/${surplus.orderId}`, { cookie, html: true });
    expect(withSurplus.text).toMatch(new RegExp(`data-card="${surplus.partnerCardId}" data-role="surplus"`));
    expect(withSurplus.text).not.toContain(surplus.code);
  });

  it('/metrics: cardpull_extra_cards by role', async () => {
    const { samples } = await scrape(stack.apiUrl);
    const of = (role: string) => samples.get('cardpull_extra_cards')?.find((s) => s.labels.role === role)?.value;
    expect({ surplus: of('surplus'), mismatch: of('mismatch') }).toEqual({ surplus: 1, mismatch: 1 });
  });
});
