import type { Browser, Page } from 'playwright-core';
import { waitFor } from '@cardpull/testing';
import { createOrder, useStack } from '../support/stack';
import { withDb } from '../recovery/support/recovery';
import { ADMIN_ENV, ALICE, launchBrowser, loggedInPage } from './support/admin';

/**
 * Issue 14, items 2 and 3 in a real browser (Debian's Chromium): filter the orders, open the dry run of a
 * bulk re-drive from the filter, run it, watch its progress page finish, and find each order's audit
 * entry naming the bulk action. NOVA-GAMES-FREE answers 503 until the fault is cleared, so its orders wait
 * in needs_attention (their next asks an hour away) and the re-drive (same request IDs) completes them.
 */
describe('bulk re-drive in a browser: filter, dry run, run, progress, audit entries', () => {
  const stack = useStack({ env: { ...ADMIN_ENV, UNKNOWN_OUTCOME_WINDOW_MS: '1000', BULK_ACTIONS_PER_SECOND: '5' } });
  let browser: Browser;
  let page: Page;
  const stuck: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, gift_card_codes: ['NOVA-GAMES-FREE'] } as never);
    for (let i = 0; i < 3; i++) stuck.push((await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1500 + 100 * i })).id);
    await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1000 });
    await waitFor('the NOVA orders in needs_attention', async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE status = 'needs_attention'"));
      return Number(rows[0]!.n) === stuck.length;
    }, 30_000);
    // Past the window their request IDs are still asked, ever less often: an hour in, the next ask is an hour
    // away (the 503s go on until then), so they wait for the operator's re-drive.
    await withDb(stack, (db) => db.query(`UPDATE attempts SET unknown_since = now() - interval '1 hour' WHERE order_id = ANY($1::uuid[])`, [stuck]));
    await waitFor('their next asks an hour away', async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND next_step_at > now() + interval '10 minutes'", [stuck]));
      return Number(rows[0]!.n) === stuck.length;
    }, 30_000);
    await stack.sim.control.clearFaults();
    page = await loggedInPage(browser, stack, ALICE);
  }, 60_000);
  afterAll(() => browser?.close());

  it('filters, dry-runs, re-drives with the same request IDs and records an audit entry per order', async () => {
    // The filter form: needs attention + a gift card; the URL is the filter.
    await page.goto(`${stack.apiUrl}/admin/orders`);
    await page.check('input[name=status][value=needs_attention]');
    await page.fill('input[name=gift_card_code]', 'NOVA-GAMES-FREE');
    await Promise.all([page.waitForURL(/\/admin\/orders\?/), page.click('form.filters button[type=submit]')]);
    expect(new URL(page.url()).searchParams.get('gift_card_code')).toBe('NOVA-GAMES-FREE');
    expect((await page.locator('#filtered tbody tr').count())).toBe(stuck.length);

    // The dry run, from the filter: how many and which; nothing changed yet.
    await Promise.all([page.waitForURL(/\/admin\/bulk\?/), page.click('a:has-text("re-drive")')]);
    expect(await page.locator('[data-eligible]').getAttribute('data-eligible')).toBe(String(stuck.length));
    for (const id of stuck) expect(await page.locator(`#dry-run tr[data-order="${id}"]`).count()).toBe(1);

    // Run it: the progress page, until done.
    await page.fill('form[action="/admin/bulk"] input[name=reason]', 'partner fixed the brand');
    await Promise.all([page.waitForURL(/\/admin\/bulk\/[0-9a-f-]{36}$/), page.click('form[action="/admin/bulk"] button[type=submit]')]);
    const bulkUrl = page.url();
    await waitFor('the bulk action to finish', async () => {
      await page.goto(bulkUrl);
      return (await page.locator('#bulk').getAttribute('data-state')) === 'done';
    }, 30_000, 300);
    expect(await page.locator('#bulk').textContent()).toMatch(/3\s*done, 0\s*skipped/);

    // Each order: re-driven with its same request ID, completed, and its audit entry links the bulk action.
    const { rows } = await withDb(stack, (db) =>
      db.query<{ id: string; status: string; ids: number }>('SELECT o.id, o.status::text AS status, (SELECT count(*)::int FROM attempts a WHERE a.order_id = o.id) AS ids FROM orders o WHERE o.id = ANY($1::uuid[])', [stuck]),
    );
    await waitFor('the re-driven orders to complete', async () => {
      const { rows: now } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND status = 'completed'", [stuck]));
      return Number(now[0]!.n) === stuck.length;
    }, 30_000);
    expect(rows.map((r) => r.ids)).toEqual([1, 1, 1]);
    for (const id of stuck) {
      await page.goto(`${stack.apiUrl}/admin/orders/${id}`);
      const entry = page.locator('#audit tr[data-audit=redriven]');
      await expect(entry.textContent()).resolves.toMatch(/alice[\s\S]*partner fixed the brand/);
      expect(await entry.locator(`a[href="${new URL(bulkUrl).pathname}"]`).count()).toBe(1);
    }
  });
});
