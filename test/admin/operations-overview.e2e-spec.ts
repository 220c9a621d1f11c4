import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { createOrder, useStack, waitForOrder } from '../support/stack';
import { withDb } from '../recovery/support/recovery';
import { ADMIN_ENV, ALICE, adminCall, launchBrowser, loggedInPage, login } from './support/admin';

/**
 * Issue 21, part 3: what a new operator met on the overview and the job dashboard. A partner failing the
 * same way hundreds of times (and orders failing for many causes) must not stretch the overview: errors
 * are grouped by kind with a count, first and last seen and an example, the latest few kinds shown and the
 * rest one link away. The job dashboard must work offline: nothing it loads comes from another origin.
 */
describe('operations overview under a flood of errors, and the job dashboard offline', () => {
  const stack = useStack({ env: ADMIN_ENV });
  let browser: Browser;
  let page: Page;
  let cookie: string;
  const KINDS = 12;
  const EACH = 30;
  const CAUSES = 25;
  let example: { id: string; requestId: string };

  beforeAll(async () => {
    browser = await launchBrowser();
    cookie = await login(stack, ALICE);
    example = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1000 });
    await waitForOrder(stack, example.id, (o) => o.status === 'completed');
    await withDb(stack, async (db) => {
      // KINDS kinds of partner error, EACH times each, with long messages that differ by an id (as real ones
      // do); the latest kind names the example order's request ID.
      const base = new Date().toISOString();
      for (let k = 0; k < KINDS; k++) {
        for (let i = 0; i < EACH; i++) {
          const requestId = k === KINDS - 1 && i === EACH - 1 ? example.requestId : randomUUID();
          await db.query(
            `INSERT INTO partner_errors (at, endpoint, outcome, code, http_status, message, request_id) VALUES ($5::timestamptz - make_interval(secs => $1), 'createCard', 'failure', $2, 503, $3, $4)`,
            [(KINDS - k) * 100 - i, `flood_${k}`, `The upstream of gift card provider ${k} did not answer for ${randomUUID()}: ${'please retry later, '.repeat(18)}`, requestId, base],
          );
        }
      }
      // CAUSES causes of failure, one failed order each.
      await db.query(
        `INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount, error_code, error_message, step_seq)
         SELECT gen_random_uuid(), 'shop', 'flood-' || i, 'h', 'failed', 'sync', 'FAST-FREE', 1000, 'cause_' || i, 'failed for cause ' || i, 1
         FROM generate_series(1, $1::int) i`,
        [CAUSES],
      );
    });
    page = await loggedInPage(browser, stack, ALICE);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('groups repeated partner errors by kind (count, first and last seen, an example order) and lists the latest 10 kinds, the rest one link away', async () => {
    await page.goto(`${stack.apiUrl}/admin`);
    const rows = page.locator('#partner-errors tbody tr');
    expect(await rows.count()).toBe(10);
    const latest = rows.first();
    expect(await latest.getAttribute('data-error-kind')).toBe(`createCard failure flood_${KINDS - 1} 503`);
    expect(await latest.locator('[data-count]').textContent()).toBe(String(EACH));
    await expect(latest.textContent()).resolves.toContain(example.requestId);
    expect(await latest.locator(`a[href="/admin/orders/${example.id}"]`).count()).toBe(1);
    // First and last seen: the kind's oldest and newest error.
    const seen = async (which: string) => (await latest.locator(`[data-${which}-seen] span`).getAttribute('title'))!;
    expect(Date.parse(await seen('last')) - Date.parse(await seen('first'))).toBe((EACH - 1) * 1000);
    await expect(page.locator('#partner-errors h3').textContent()).resolves.toContain(`${KINDS * EACH} kept, of ${KINDS} kinds`);
    expect(await page.locator('[data-all-partner-errors]').getAttribute('href')).toBe('/admin/errors#partner-errors');
    // Causes of failure the same way: the latest 10, and a link to all.
    expect(await page.locator('#failures tbody tr').count()).toBe(10);
    expect(await page.locator('[data-all-failures]').textContent()).toBe(`All ${CAUSES} causes`);
    // Hundreds of long messages make ten rows of a few lines each, not thousands of pixels (1366 wide).
    expect(await page.locator('#partner-errors').evaluate((e) => e.getBoundingClientRect().height)).toBeLessThan(1200);
    // (The whole page: the money panel of issue 24 took it from about 2,000 px to 2,200.)
    expect(await page.evaluate<number>('document.documentElement.scrollHeight')).toBeLessThan(2600);
  });

  it('/admin/errors lists every kind and cause, and the latest partner errors one by one', async () => {
    const res = await adminCall(stack, 'GET', '/admin/errors', { cookie, html: true });
    expect(res.status).toBe(200);
    const kinds = [...res.text.matchAll(/data-error-kind="createCard failure (flood_\d+) 503"/g)].map((m) => m[1]);
    expect(new Set(kinds).size).toBe(KINDS);
    const causes = [...res.text.matchAll(/data-code="(cause_\d+)"/g)].map((m) => m[1]);
    expect(new Set(causes).size).toBe(CAUSES);
    const latest = res.text.slice(res.text.indexOf('id="latest-partner-errors"'));
    expect((latest.match(/<tr><td/g) ?? []).length).toBe(100);
  });

  it('the job dashboard serves no remote asset: its page and styles name no other origin, and loading it asks nothing outside 127.0.0.1', async () => {
    const board = await adminCall(stack, 'GET', '/admin/queues', { cookie, html: true });
    expect(board.status).toBe(200);
    const remote = (text: string) => [...text.matchAll(/(?:href|src)\s*=\s*["']?\s*(?:https?:)?\/\/[^"'\s>]+|url\(\s*["']?(?:https?:)?\/\/[^)]+\)|@import\s+["']?(?:https?:)?\/\//g)].map((m) => m[0]);
    expect(remote(board.text)).toEqual([]);
    const sheets = [...board.text.matchAll(/<link[^>]+href="([^"]+\.css)"/g)].map((m) => m[1]!);
    expect(sheets.length).toBeGreaterThan(0);
    for (const sheet of sheets) {
      const css = await adminCall(stack, 'GET', `/admin/queues/${sheet}`, { cookie });
      expect([sheet, css.status, remote(css.text)]).toEqual([sheet, 200, []]);
    }

    // In a browser: every request the dashboard makes (scripts, styles loaded later, fonts, images).
    const outside: string[] = [];
    await page.context().route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    await page.goto(`${stack.apiUrl}/admin/queues`);
    await page.getByText('orders', { exact: true }).first().waitFor();
    await page.getByText('callbacks', { exact: true }).first().waitFor();
    await page.waitForLoadState('networkidle');
    expect(outside).toEqual([]);
  });
});
