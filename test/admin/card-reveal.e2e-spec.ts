import type { Pool } from 'pg';
import { testPool, type FaultSpecInput } from '@cardpull/testing';
import { createOrder, useStack, waitForOrder } from '../support/stack';
import { ADMIN_ENV, ALICE, VICTOR, adminCall, csrfOf, login } from './support/admin';

/**
 * A card kept for a refund or reuse (surplus, mismatch) is masked everywhere, the order page included. An
 * admin may reveal one, with a reason: the answer to that POST shows the card's code, PIN and PDF link once,
 * and the same request writes `card_revealed` (who, the partner card id, why) on the order's timeline.
 * Viewers cannot; a reveal needs the CSRF token, a same-origin request and a reason; the order's own card
 * (the client's) is not revealed there.
 */
describe('operations: revealing a card kept for a refund or reuse (admins only, with a reason, audited)', () => {
  let pool: Pool;
  const stack = useStack({ env: ADMIN_ENV, beforeClose: () => pool?.end() });
  let alice: string;
  let victor: string;
  let mismatched: { id: string; requestId: string };
  let card: { id: string; code: string; pin_code: string | null };
  let pdf: string;

  const revealPath = (orderId: string) => `/admin/orders/${orderId}/reveal-card`;
  const reveals = async (orderId: string) =>
    (await pool.query(`SELECT actor, request_id, detail FROM order_events WHERE order_id = $1 AND type = 'card_revealed' ORDER BY id`, [orderId])).rows;
  const leaks = (text: string) => ({ code: text.includes(card.code), pin: text.includes(`>${card.pin_code}<`), pdf: text.includes(pdf) });

  beforeAll(async () => {
    pool = testPool(stack.db.url, 2);
    [alice, victor] = await Promise.all([login(stack, ALICE), login(stack, VICTOR)]);
    // ACME-BOOKS-FIXED has PINs: the partner issues a card of 1100 for an order of 1000 (card_mismatch).
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'wrong_card', amount_delta: 100, gift_card_codes: ['ACME-BOOKS-FIXED'], times: 1 } as FaultSpecInput);
    mismatched = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 });
    expect((await waitForOrder(stack, mismatched.id)).error.code).toBe('card_mismatch');
    const [issued] = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === mismatched.requestId);
    card = issued!;
    expect(card.pin_code).toEqual(expect.any(String));
    pdf = `${stack.sim.baseUrl}/cards/${card.id}.pdf`;
  });

  it('the order page offers an admin a reveal form for the held card (CSRF token, required reason) and shows it masked; the operations page links to it', async () => {
    const page = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie: alice, html: true });
    expect(page.status).toBe(200);
    const form = /<form[^>]*action="([^"]+)"[^>]*data-reveal="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(page.text);
    expect(form?.[1]).toBe(revealPath(mismatched.id));
    expect(form?.[2]).toBe(card.id);
    expect(form?.[3]).toContain(`name="card" value="${card.id}"`);
    expect(form?.[3]).toContain('name="csrf"');
    expect(form?.[3]).toMatch(/name="reason"[^>]*required/);
    expect(page.text).toContain(`id="card-${card.id}"`);
    expect(leaks(page.text)).toEqual({ code: false, pin: false, pdf: false });

    const overview = await adminCall(stack, 'GET', '/admin', { cookie: alice, html: true });
    const section = overview.text.slice(overview.text.indexOf('id="cards-to-recover"'));
    expect(section).toMatch(new RegExp(`data-card="${card.id}"[\\s\\S]*?href="/admin/orders/${mismatched.id}#card-${card.id}"`));
  });

  it('an admin reveal with a reason shows that card’s code, PIN and PDF link in its answer, and records card_revealed (admin:alice, card id, reason) on the timeline', async () => {
    const page = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie: alice, html: true });
    const reason = 'partner refund ticket R-7731 asks for the code';
    const res = await adminCall(stack, 'POST', revealPath(mismatched.id), { cookie: alice, form: { csrf: csrfOf(page.text), card: card.id, reason } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain(`data-revealed="${card.id}"`);
    expect(leaks(res.text)).toEqual({ code: true, pin: true, pdf: true });
    expect(await reveals(mismatched.id)).toEqual([
      { actor: 'admin:alice', request_id: mismatched.requestId, detail: { partner_card_id: card.id, role: 'mismatch', reason } },
    ]);

    // Afterwards the order page shows the audit entry, and the card masked as before.
    const after = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie: alice, html: true });
    expect(after.text).toMatch(new RegExp(`data-audit="card_revealed"[\\s\\S]*?alice[\\s\\S]*?${reason}`));
    expect(leaks(after.text)).toEqual({ code: false, pin: false, pdf: false });
  });

  it('a reveal without a reason is refused: nothing shown, nothing recorded', async () => {
    const before = (await reveals(mismatched.id)).length;
    const page = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie: alice, html: true });
    const res = await adminCall(stack, 'POST', revealPath(mismatched.id), { cookie: alice, form: { csrf: csrfOf(page.text), card: card.id, reason: '   ' } });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/admin/orders/${mismatched.id}`);
    expect(leaks(res.text)).toEqual({ code: false, pin: false, pdf: false });
    expect(await reveals(mismatched.id)).toHaveLength(before);
    const flash = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('cardpull_flash='))!.split(';')[0]!;
    const next = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie: `${alice}; ${flash}`, html: true });
    expect(next.text).toContain('a reason is required to reveal a card');
  });

  it('a viewer gets no reveal form and is refused (403 read_only); nothing shown, nothing recorded', async () => {
    const before = (await reveals(mismatched.id)).length;
    const page = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie: victor, html: true });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('reveal-card');
    const res = await adminCall(stack, 'POST', revealPath(mismatched.id), { cookie: victor, form: { csrf: csrfOf(page.text), card: card.id, reason: 'curious' } });
    expect(res.status).toBe(403);
    expect(res.json.errors[0].code).toBe('read_only');
    expect(leaks(res.text)).toEqual({ code: false, pin: false, pdf: false });
    expect(await reveals(mismatched.id)).toHaveLength(before);
  });

  it('a reveal without the CSRF token, or posted from another site, is refused', async () => {
    const before = (await reveals(mismatched.id)).length;
    const page = await adminCall(stack, 'GET', `/admin/orders/${mismatched.id}`, { cookie: alice, html: true });
    const form = { card: card.id, reason: 'r' };
    const noToken = await adminCall(stack, 'POST', revealPath(mismatched.id), { cookie: alice, form });
    const crossSite = await adminCall(stack, 'POST', revealPath(mismatched.id), { cookie: alice, form: { ...form, csrf: csrfOf(page.text) }, headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } });
    expect([noToken.status, noToken.json?.errors[0].code]).toEqual([403, 'csrf_token_invalid']);
    expect([crossSite.status, crossSite.json?.errors[0].code]).toEqual([403, 'cross_site_request']);
    expect(leaks(noToken.text + crossSite.text)).toEqual({ code: false, pin: false, pdf: false });
    expect(await reveals(mismatched.id)).toHaveLength(before);
  });

  it('the order’s own card (the client’s) is not revealed there', async () => {
    const done = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 });
    expect((await waitForOrder(stack, done.id)).status).toBe('completed');
    const [own] = (await stack.sim.control.ledger()).cards.filter((c) => c.request_id === done.requestId);
    const page = await adminCall(stack, 'GET', `/admin/orders/${done.id}`, { cookie: alice, html: true });
    expect(page.text).not.toContain('reveal-card');
    const res = await adminCall(stack, 'POST', revealPath(done.id), { cookie: alice, form: { csrf: csrfOf(page.text), card: own!.id, reason: 'try' } });
    expect(res.status).toBe(303);
    expect(res.text).not.toContain(own!.code);
    expect(await reveals(done.id)).toEqual([]);
  });
});
