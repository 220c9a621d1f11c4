import type { Browser, Page } from 'playwright-core';
import { CatalogService } from '../../apps/api/src/catalog/catalog.service';
import { useStack } from '../support/stack';
import { ADMIN_ENV, ALICE, VICTOR, launchBrowser, loggedInPage } from './support/admin';

/**
 * Issue 25, the catalog change feed on the operations page, in a real browser (Debian's Chromium): the
 * overview's "Catalog changes" card shows the latest changes and links to /admin/catalog-changes, which lists
 * them latest first with the time, the gift card, the kind and a readable before and after.
 */
describe('catalog changes on the operations page, in a browser', () => {
  const stack = useStack({ env: { ...ADMIN_ENV, CATALOG_REFRESH_INTERVAL_MS: '3600000' } });
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    const sim = stack.sim.control;
    const refresh = async () => expect(await stack.api!.get(CatalogService).refresh()).toBe(true);
    // Two reads with changes: first a withdrawn gift card and a face value change, then a discount.
    await sim.removeGiftCard('SOLD-OUT-FIXED');
    await sim.changeGiftCard('ACME-BOOKS-FIXED', { facial_values: { type: 'fixed', amounts: [1000, 5000, 7500, 10000] } });
    await refresh();
    await sim.changeGiftCard('FAST-FREE', { discount: 1.5 });
    await refresh();
    page = await loggedInPage(browser, stack, ALICE);
  }, 60_000);
  afterAll(() => browser?.close());

  const rows = (p: Page, scope: string) =>
    p.locator(`${scope} tr[data-change]`).evaluateAll((trs) =>
      trs.map((tr) => ({
        code: tr.getAttribute('data-code'),
        kind: tr.getAttribute('data-kind'),
        when: tr.querySelector('td')?.textContent?.trim(),
        before: tr.querySelector('[data-before]')?.textContent?.trim(),
        after: tr.querySelector('[data-after]')?.textContent?.trim(),
        text: tr.textContent?.replace(/\s+/g, ' ').trim(),
      })),
    );

  it('the overview shows the latest changes, latest first, and links to the list', async () => {
    await page.goto(`${stack.apiUrl}/admin`);
    const card = await rows(page, '#catalog-changes');
    expect(card.map((r) => [r.kind, r.code])).toEqual([
      ['discount_changed', 'FAST-FREE'],
      ['removed', 'SOLD-OUT-FIXED'],
      ['face_values_changed', 'ACME-BOOKS-FIXED'],
    ]);
    await Promise.all([page.waitForURL(/\/admin\/catalog-changes$/), page.click('a[data-all-catalog-changes]')]);
    expect(await page.title()).toMatch(/^Catalog changes/);
  });

  it('the list gives each change its time, gift card, kind and a readable before and after', async () => {
    const list = await rows(page, '#catalog-changes');
    expect(list).toHaveLength(3);
    for (const r of list) expect(r.when).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const byKind = Object.fromEntries(list.map((r) => [r.kind, r]));
    expect(byKind.discount_changed).toMatchObject({ code: 'FAST-FREE', before: '0', after: '1.5' });
    expect(byKind.face_values_changed).toMatchObject({ code: 'ACME-BOOKS-FIXED', before: '10.00, 25.00, 50.00, 100.00', after: '10.00, 50.00, 75.00, 100.00' });
    expect(byKind.face_values_changed!.text).toContain('withdrawn 25.00; added 75.00');
    expect(byKind.removed).toMatchObject({ code: 'SOLD-OUT-FIXED', before: 'Gone Shoes gift card (Gone Shoes): 10.00, 20.00; discount 1; with PIN', after: '-' });
    expect(byKind.removed!.text).toContain('orders for it are refused');
  });

  it('a viewer sees the same list (reading changes nothing)', async () => {
    const viewer = await loggedInPage(browser, stack, VICTOR);
    await viewer.goto(`${stack.apiUrl}/admin/catalog-changes`);
    expect((await rows(viewer, '#catalog-changes')).map((r) => r.kind)).toEqual(['discount_changed', 'removed', 'face_values_changed']);
  });
});
