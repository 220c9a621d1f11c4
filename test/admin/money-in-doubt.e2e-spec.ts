import { expectInvariants, waitFor } from '@cardpull/testing';
import { scrape, valueOf } from '../observability/support';
import { withDb } from '../recovery/support/recovery';
import { createOrder, useStack, waitForOrder } from '../support/stack';
import { ADMIN_ENV, ALICE, adminCall, csrfOf, login } from './support/admin';

/**
 * Money in doubt, visible: orders waiting on a request ID of unknown outcome (it may have been billed) are
 * counted with their face value and the oldest, on /metrics and on the operations page; those past the
 * window are grouped as `outcome_unknown`. The order page tells the operator what to ask the partner and
 * offers "Declare dead" (a reason required), whose audit entry and effect the order then shows.
 */
describe('money in doubt on the operations page and in /metrics, and declare dead from the order page', () => {
  const stack = useStack({ env: { ...ADMIN_ENV, UNKNOWN_OUTCOME_WINDOW_MS: '60000' }, beforeClose: expectInvariants });
  let cookie: string;

  it('counts, sums and ages the orders waiting on an ID of unknown outcome, by status', async () => {
    cookie = await login(stack, ALICE);
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, gift_card_codes: ['FAST-FREE'] });
    const parked = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1300 });
    const fresh = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1400 });
    // One of them past the window (an hour in doubt), the other within it.
    await waitFor('both sent once', async () => (await stack.sim.control.ledger()).requests.filter((r) => r.status === 503).length >= 2 || null);
    await withDb(stack, (db) => db.query(`UPDATE attempts SET unknown_since = now() - interval '1 hour' WHERE request_id = $1`, [parked.requestId]));
    await waitForOrder(stack, parked.id, (o) => o.status === 'needs_attention');

    const { samples } = await scrape(stack.apiUrl);
    expect(valueOf(samples, 'cardpull_money_in_doubt_orders', { status: 'needs_attention' })).toBe(1);
    expect(valueOf(samples, 'cardpull_money_in_doubt_amount', { status: 'needs_attention' })).toBe(1300);
    expect(valueOf(samples, 'cardpull_money_in_doubt_orders', { status: 'in_progress' })).toBe(1);
    expect(valueOf(samples, 'cardpull_money_in_doubt_amount', { status: 'in_progress' })).toBe(1400);
    expect(valueOf(samples, 'cardpull_money_in_doubt_oldest_seconds', { status: 'needs_attention' })).toBeGreaterThanOrEqual(3600);

    const page = await adminCall(stack, 'GET', '/admin', { cookie, html: true });
    expect(page.text).toMatch(/id="money-in-doubt"/);
    expect(page.text).toMatch(/<tr data-in-doubt="needs_attention"><td>.*?<\/td><td><b>1<\/b><\/td>/s);
    expect(page.text).toMatch(/<tr data-in-doubt="in_progress"><td>.*?<\/td><td><b>1<\/b><\/td>/s);
    // Grouped by cause as outcome_unknown.
    expect(page.text).toMatch(/data-code="outcome_unknown"/);
    await stack.sim.control.clearFaults();
    expect((await waitForOrder(stack, fresh.id, (o) => o.status === 'completed')).attempts).toHaveLength(1);
  });

  it('the order page says what to ask the partner; declare dead needs a reason, is audited, and stops the asking', async () => {
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, gift_card_codes: ['ACME-BOOKS-FIXED'] });
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 });
    await waitFor('a send answered 503', async () => (await stack.sim.control.ledger()).requests.some((r) => r.request_id === requestId && r.status === 503) || null);
    await withDb(stack, (db) => db.query(`UPDATE attempts SET unknown_since = now() - interval '1 hour' WHERE request_id = $1`, [requestId]));
    await waitForOrder(stack, id, (o) => o.status === 'needs_attention');
    const orderPage = await adminCall(stack, 'GET', `/admin/orders/${id}`, { cookie, html: true });
    expect(orderPage.text).toContain(`data-open-request-id="${requestId}"`);
    expect(orderPage.text).toContain('Ask the partner what became of it');
    expect(orderPage.text).toContain(`formaction="/admin/orders/${id}/declare-dead"`);
    const csrf = csrfOf(orderPage.text);

    const refused = await adminCall(stack, 'POST', `/admin/orders/${id}/declare-dead`, { cookie, form: { csrf, reason: '' } });
    expect(refused.status).toBe(303);
    expect((await stack.call('GET', `/v1/orders/${id}`)).body.order.attempts[0].state).not.toBe('failed_definitive');

    const done = await adminCall(stack, 'POST', `/admin/orders/${id}/declare-dead`, { cookie, form: { csrf, reason: 'partner ticket 9: never processed' } });
    expect(done.status).toBe(303);
    const order = (await stack.call('GET', `/v1/orders/${id}`)).body.order;
    expect(order).toMatchObject({ status: 'needs_attention', error: { code: 'declared_dead' }, attempts: [expect.objectContaining({ request_id: requestId, state: 'failed_definitive' })] });
    await withDb(stack, async (db) => {
      const { rows } = await db.query(`SELECT next_step FROM orders WHERE id = $1`, [id]);
      expect(rows[0].next_step).toBeNull();
      const audit = await db.query(`SELECT actor, detail->>'reason' AS reason FROM order_events WHERE order_id = $1 AND type = 'declared_dead'`, [id]);
      expect(audit.rows).toEqual([{ actor: 'admin:alice', reason: 'partner ticket 9: never processed' }]);
      const attempt = await db.query(`SELECT declared_dead_by FROM attempts WHERE request_id = $1`, [requestId]);
      expect(attempt.rows[0].declared_dead_by).toBe('alice');
    });
    // The sync ID is never sent again.
    const before = (await stack.sim.control.ledger()).requests.filter((r) => r.request_id === requestId).length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await stack.sim.control.ledger()).requests.filter((r) => r.request_id === requestId)).toHaveLength(before);
    await stack.sim.control.clearFaults();
  });
});
