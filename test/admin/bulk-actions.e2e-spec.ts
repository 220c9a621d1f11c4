import { waitFor } from '@cardpull/testing';
import { createOrder, useStack } from '../support/stack';
import { withDb } from '../recovery/support/recovery';
import { ADMIN_ENV, ALICE, VICTOR, adminCall, csrfOf, login } from './support/admin';

/**
 * Issue 14, item 3: filtered bulk actions. A dry run shows how many orders and which, and changes nothing;
 * an empty filter is refused; viewers cannot run one; it runs as a rate-limited background task with its
 * progress on a page; every order it touches gets its own audit entry naming the bulk action.
 */
describe('bulk actions on a filter: dry run, then re-drive or mark failed, a few orders a second', () => {
  // STG-BROKEN never works in staging: its orders end in needs_attention quickly.
  const stack = useStack({ env: { ...ADMIN_ENV, UNKNOWN_OUTCOME_WINDOW_MS: '1000', BULK_ACTIONS_PER_SECOND: '2' } });
  let alice: string;
  const broken: string[] = [];

  /**
   * Past the window an order's request ID is still asked, ever less often: an hour in, the next ask is an
   * hour away, so none of `ids` is being asked at the partner when a bulk action reaches it (it would be skipped).
   */
  const parkAsksAnHourAway = (ids: string[]) =>
    withDb(stack, async (db) => {
      await db.query(`UPDATE attempts SET unknown_since = now() - interval '1 hour' WHERE order_id = ANY($1::uuid[])`, [ids]);
      await waitFor('their next asks an hour away', async () => {
        const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE id = ANY($1::uuid[]) AND next_step_at > now() + interval '10 minutes'", [ids]);
        return rows[0]!.n === ids.length || null;
      }, 30_000);
    });

  beforeAll(async () => {
    alice = await login(stack, ALICE);
    for (let i = 0; i < 5; i++) broken.push((await createOrder(stack, { gift_card_code: 'STG-BROKEN', amount: 1000 })).id);
    await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1000 });
    await waitFor('the broken orders in needs_attention', async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'needs_attention'"));
      return Number(rows[0]!.n) === broken.length;
    }, 30_000);
    // Past the window their request IDs are still asked, ever less often: an hour in, the next ask is an hour
    // away, so none is being asked at the partner when a bulk action reaches it (it would be skipped).
    await parkAsksAnHourAway(broken);
  });

  it('an empty filter (or a status alone: every order in needs attention) is refused unless the dry run\'s "every order" box is ticked', async () => {
    const page = await adminCall(stack, 'GET', '/admin/bulk?action=mark_failed&gift_card_code=STG-BROKEN', { cookie: alice, html: true });
    const res = await adminCall(stack, 'POST', '/admin/bulk', { cookie: alice, form: { csrf: csrfOf(page.text), action: 'mark_failed', filter: 'status=needs_attention', reason: 'all of them' } });
    expect([res.status, res.json?.errors?.[0]?.code]).toEqual([400, 'empty_filter']);
  });

  it('the dry run lists exactly the orders it would act on: a filter on another status selects none, and lists none', async () => {
    const page = await adminCall(stack, 'GET', '/admin/bulk?action=mark_failed&status=completed&gift_card_code=STG-BROKEN', { cookie: alice, html: true });
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-eligible="0"');
    expect(broken.filter((id) => page.text.includes(`data-order="${id}"`))).toEqual([]);
  });

  it('the dry run shows how many and which, and changes nothing; a viewer sees no form and is refused', async () => {
    const page = await adminCall(stack, 'GET', '/admin/bulk?action=mark_failed&gift_card_code=STG-BROKEN', { cookie: alice, html: true });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`data-eligible="${broken.length}"`);
    for (const id of broken) expect(page.text).toContain(`data-order="${id}"`);
    const { rows } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'needs_attention'"));
    expect(Number(rows[0]!.n)).toBe(broken.length);

    const victor = await login(stack, VICTOR);
    const asViewer = await adminCall(stack, 'GET', '/admin/bulk?action=mark_failed&gift_card_code=STG-BROKEN', { cookie: victor, html: true });
    expect(asViewer.text).not.toContain('action="/admin/bulk"');
    const refused = await adminCall(stack, 'POST', '/admin/bulk', { cookie: victor, form: { csrf: csrfOf(asViewer.text), action: 'mark_failed', filter: 'gift_card_code=STG-BROKEN', reason: 'viewer tries' } });
    expect([refused.status, refused.json?.errors?.[0]?.code]).toEqual([403, 'read_only']);
  });

  it('runs in the background at BULK_ACTIONS_PER_SECOND with progress, and every order gets its audit entry naming the bulk action', async () => {
    const page = await adminCall(stack, 'GET', '/admin/bulk?action=mark_failed&gift_card_code=STG-BROKEN', { cookie: alice, html: true });
    const started = await adminCall(stack, 'POST', '/admin/bulk', { cookie: alice, form: { csrf: csrfOf(page.text), action: 'mark_failed', filter: 'gift_card_code=STG-BROKEN', reason: 'brand broken in staging' } });
    expect(started.status).toBe(303);
    const id = String(started.headers.location).split('/').pop()!;
    const progress = async () => (await adminCall(stack, 'GET', `/admin/api/bulk/${id}`, { cookie: alice })).json;
    const seen: number[] = [];
    const done = await waitFor('the bulk action to finish', async () => {
      const p = await progress();
      seen.push(p.position);
      return p.state === 'done' ? p : null;
    }, 30_000, 200);
    expect(done).toMatchObject({ total: broken.length, position: broken.length, applied: broken.length, skipped: 0, created_by: 'alice' });
    // 2 a second: the progress was seen part-way at least once.
    expect(seen.some((p) => p > 0 && p < broken.length)).toBe(true);
    const { rows } = await withDb(stack, (db) =>
      db.query<{ order_id: string; actor: string; detail: { reason: string; bulk: { id: string; action: string } } }>("SELECT order_id, actor, detail FROM order_events WHERE type = 'marked_failed'"),
    );
    expect(rows.map((r) => r.order_id).sort()).toEqual([...broken].sort());
    for (const r of rows) expect(r).toMatchObject({ actor: 'admin:alice', detail: { reason: 'brand broken in staging', bulk: { id, action: 'mark_failed' } } });
    const progressPage = await adminCall(stack, 'GET', `/admin/bulk/${id}`, { cookie: alice, html: true });
    expect(progressPage.text).toContain('data-state="done"');
    // The order page's audit trail links the bulk action.
    const orderPage = await adminCall(stack, 'GET', `/admin/orders/${broken[0]}`, { cookie: alice, html: true });
    expect(orderPage.text).toMatch(new RegExp(`data-audit="marked_failed"[\\s\\S]*href="/admin/bulk/${id}"[\\s\\S]*brand broken in staging`));
  });

  it('the Orders page\'s bulk link for a status-only filter opens a dry run of every order in needs attention, which runs once that is confirmed', async () => {
    const more: string[] = [];
    for (let i = 0; i < 2; i++) more.push((await createOrder(stack, { gift_card_code: 'STG-BROKEN', amount: 1000 })).id);
    await waitFor('the new broken orders in needs_attention', async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'needs_attention' AND id = ANY($1::uuid[])", [more]));
      return Number(rows[0]!.n) === more.length;
    }, 30_000);
    // Past the window their request IDs are still asked, ever less often: an hour in, the next ask is an hour
    // away, so none is being asked when the bulk action reaches it.
    await parkAsksAnHourAway(more);
    // Every order in needs attention: these two, and any an earlier test left there.
    const { rows: all } = await withDb(stack, (db) => db.query<{ id: string }>("SELECT id FROM orders WHERE status = 'needs_attention'"));
    const orders = await adminCall(stack, 'GET', '/admin/orders?status=needs_attention', { cookie: alice, html: true });
    expect(orders.status).toBe(200);
    const link = /href="(\/admin\/bulk\?action=mark_failed[^"]*)"/.exec(orders.text)?.[1]?.replaceAll('&amp;', '&');
    expect(link).toBe('/admin/bulk?action=mark_failed&status=needs_attention');
    const dryRun = await adminCall(stack, 'GET', link!, { cookie: alice, html: true });
    expect([dryRun.status, dryRun.text.includes(`data-eligible="${all.length}"`)]).toEqual([200, true]);
    for (const id of more) expect(dryRun.text).toContain(`data-order="${id}"`);
    // The form names the whole of needs attention and asks for it to be confirmed.
    expect(dryRun.text).toMatch(/<input type="checkbox" name="every" value="yes" required>/);
    const form = { csrf: csrfOf(dryRun.text), action: 'mark_failed', filter: 'status=needs_attention', reason: 'all of them' };
    const unconfirmed = await adminCall(stack, 'POST', '/admin/bulk', { cookie: alice, form });
    expect([unconfirmed.status, unconfirmed.json?.errors?.[0]?.code]).toEqual([400, 'empty_filter']);
    const started = await adminCall(stack, 'POST', '/admin/bulk', { cookie: alice, form: { ...form, every: 'yes' } });
    expect(started.status).toBe(303);
    const id = String(started.headers.location).split('/').pop()!;
    const done = await waitFor('the bulk action to finish', async () => {
      const p = (await adminCall(stack, 'GET', `/admin/api/bulk/${id}`, { cookie: alice })).json;
      return p.state === 'done' ? p : null;
    }, 30_000, 200);
    expect(done).toMatchObject({ total: all.length, position: all.length });
    const { rows } = await withDb(stack, (db) => db.query<{ id: string; status: string }>('SELECT id, status FROM orders WHERE id = ANY($1::uuid[])', [more]));
    expect(rows.map((r) => r.status)).toEqual(['failed', 'failed']);
  });
});
