import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { waitFor } from '@cardpull/testing';
import { createOrder, insertOrder, useStack } from '../support/stack';
import { withDb } from '../recovery/support/recovery';
import { ADMIN_ENV, ALICE, launchBrowser, loggedInPage } from './support/admin';

const SCREENSHOT = join(__dirname, '..', '..', 'docs', 'img', 'operations-charts.png');
const VIEWPORT = { width: 1366, height: 768 };

/**
 * Issue 14, item 1: charts on the operations page, drawn server-side as SVG from Postgres (the page's CSP
 * allows no script), read in a real browser after a burst of orders of every outcome.
 */
describe('charts in a browser: orders by final status, time to card, the partner, open orders by age, money', () => {
  const stack = useStack({ env: { ...ADMIN_ENV, UNKNOWN_OUTCOME_WINDOW_MS: '1000' } });
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1000 + i, mode: i % 4 ? 'sync' : 'async' })).id);
    for (let i = 0; i < 3; i++) ids.push((await createOrder(stack, { gift_card_code: 'STG-BROKEN', amount: 1000 })).id);
    ids.push((await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1234 })).id);
    await createOrder(stack, { gift_card_code: 'SOLD-OUT-FIXED', amount: 1000 }); // stays open (awaiting stock)
    await waitFor('the burst to end', async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND status IN ('completed', 'failed', 'needs_attention')", [ids]));
      return Number(rows[0]!.n) === ids.length;
    }, 30_000);
    page = await loggedInPage(browser, stack, ALICE);
  }, 60_000);
  afterAll(() => browser?.close());

  it('each chart renders with the burst in it, and the page fits a 1366 px screen (screenshot with UPDATE_SCREENSHOTS=1)', async () => {
    await page.goto(`${stack.apiUrl}/admin/charts?range=hour`);
    const count = (selector: string) => page.locator(selector).count();
    // Orders ended by final status: bars of all three.
    for (const s of ['completed', 'failed', 'needs attention']) expect([s, await count(`#chart-orders rect[data-series="${s}"]`)]).toEqual([s, expect.any(Number)]);
    const completedBars = await page.locator('#chart-orders rect[data-series="completed"] title').allTextContents();
    expect(completedBars.reduce((sum, t) => sum + Number(/: (\d+) completed/.exec(t)?.[1] ?? 0), 0)).toBe(20);
    expect(await count('#chart-orders rect[data-series="failed"]')).toBeGreaterThan(0);
    expect(await count('#chart-orders rect[data-series="needs attention"]')).toBeGreaterThan(0);
    // Time to card: three lines with points.
    for (const s of ['p50', 'p95', 'p99']) expect(await count(`#chart-time-to-card g[data-series="${s}"] circle`)).toBeGreaterThan(0);
    // The partner: sync call latency, and the troubled answers (the STG-BROKEN orders' unknown outcomes).
    expect(await count('#chart-partner g[data-series="sync call p50"] circle')).toBeGreaterThan(0);
    expect(await count('#chart-partner rect[data-series="unknown outcomes"]')).toBeGreaterThan(0);
    // Open orders by status and age: the order waiting for stock.
    expect(await count('#chart-open g[data-status="awaiting_stock"] rect')).toBeGreaterThan(0);
    // Money (issue 24): what the burst's cards cost, from the ledger (FAST-FREE has no discount: cost = face value).
    expect(await count('#chart-money rect[data-series="spent (cards stored)"]')).toBeGreaterThan(0);
    expect(await page.locator('#chart-money p').textContent()).toMatch(/Face value of the cards stored in the window: (\d+\.\d\d); their cost: \1\./);
    // The day and week views draw too.
    for (const range of ['day', 'week']) {
      await page.goto(`${stack.apiUrl}/admin/charts?range=${range}`);
      expect([range, await count('#chart-orders rect[data-series="completed"]')]).toEqual([range, expect.any(Number)]);
      expect(await count('#chart-orders rect[data-series="completed"]')).toBeGreaterThan(0);
    }
    await page.goto(`${stack.apiUrl}/admin/charts?range=hour`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORT.width);
    const target = process.env.UPDATE_SCREENSHOTS === '1' || !existsSync(SCREENSHOT) ? SCREENSHOT : join(tmpdir(), 'cardpull-operations-charts.png');
    mkdirSync(join(target, '..'), { recursive: true });
    await page.screenshot({ path: target, fullPage: false });
  });
});
