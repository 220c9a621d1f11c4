import { insertOrder, useStack, KEYS, idemKey } from '../support/stack';
import { waitFor } from '@cardpull/testing';
import { withDb } from '../recovery/support/recovery';
import { ADMIN_ENV, ALICE, adminCall, login } from './support/admin';

/**
 * Issue 14, item 2: search and filters over orders (status, client, gift card code, mode, time range, error
 * code, a key:value inside metadata), with shareable URLs and pagination, on the operations page and as
 * JSON for scripts (/admin/api/orders, the admin session).
 */
describe('orders by filter: the page and its JSON twin', () => {
  const stack = useStack({ env: ADMIN_ENV });
  let cookie: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    cookie = await login(stack, ALICE);
    const place = async (key: string, body: object) => {
      const res = await stack.call<{ order: { id: string } }>('POST', '/v1/orders', { key, body, headers: { 'idempotency-key': idemKey('filter') } });
      if (res.status !== 202) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
      return res.body.order.id;
    };
    for (let i = 0; i < 5; i++) ids[`cart${i}`] = await place(KEYS.shop, { gift_card_code: 'FAST-FREE', amount: 1000 + i, mode: 'sync', metadata: { cart_id: `c-${i}`, channel: 'web' } });
    ids.other = await place(KEYS.other, { gift_card_code: 'FAST-FREE', amount: 700, mode: 'async' });
    ids.failed = (await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1234 })).id;
    await waitFor('every order to end', async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ n: string }>("SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[]) AND status IN ('completed', 'failed', 'needs_attention')", [Object.values(ids)]));
      return Number(rows[0]!.n) === Object.keys(ids).length;
    }, 30_000);
  });

  const json = (query: string) => adminCall(stack, 'GET', `/admin/api/orders?${query}`, { cookie });

  it('each filter narrows: client, mode, status, error code, gift card, metadata key:value, time range', async () => {
    const idsOf = async (query: string) => ((await json(query)).json.orders as { id: string }[]).map((o) => o.id).sort();
    expect(await idsOf('client=other')).toEqual([ids.other]);
    expect(await idsOf('mode=async')).toEqual([ids.other]);
    expect(await idsOf('status=failed')).toEqual([ids.failed]);
    const failed = (await json('status=failed')).json.orders[0];
    expect(await idsOf(`error_code=${failed.error_code}`)).toEqual([ids.failed]);
    expect(await idsOf('gift_card_code=ACME-BOOKS-FIXED')).toEqual([ids.failed]);
    expect(await idsOf('meta=cart_id:c-3')).toEqual([ids.cart3]);
    expect((await idsOf('meta=channel:web&status=completed')).length).toBe(5);
    expect(await idsOf('from=2999-01-01')).toEqual([]);
    expect((await idsOf('from=2000-01-01&to=2999-01-01')).length).toBe(7);
  });

  it('pages newest first with a next link that carries the filter, until the last page', async () => {
    const seen: string[] = [];
    let next: string | null = '/admin/api/orders?meta=channel:web&limit=2';
    let pages = 0;
    while (next) {
      const res = await adminCall(stack, 'GET', next, { cookie });
      expect(res.status).toBe(200);
      seen.push(...(res.json.orders as { id: string }[]).map((o) => o.id));
      next = res.json.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([ids.cart4, ids.cart3, ids.cart2, ids.cart1, ids.cart0]);
  });

  it('a bad or unknown filter is refused with every problem named (a typo never widens the filter to every order)', async () => {
    const res = await json('status=complete&mode=both&from=yesterday&stauts=failed&limit=5000');
    expect(res.status).toBe(400);
    expect((res.json.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['from', 'limit', 'mode', 'status', 'stauts']);
    const page = await adminCall(stack, 'GET', '/admin/orders?mode=both', { cookie, html: true });
    expect(page.status).toBe(400);
    expect(page.text).toContain('<b>mode</b>: sync or async');
  });

  it('the page is the filter: its form keeps the values, its URL can be shared, it needs the session', async () => {
    const page = await adminCall(stack, 'GET', '/admin/orders?status=completed&client=shop&meta=cart_id:c-1', { cookie, html: true });
    expect(page.status).toBe(200);
    expect(page.text).toContain('value="completed" checked');
    expect(page.text).toContain('name="client" value="shop"');
    expect(page.text).toContain('value="cart_id:c-1"');
    expect(page.text).toContain(`data-order="${ids.cart1}"`);
    expect(page.text).not.toContain(`data-order="${ids.cart2}"`);
    const anonymous = await adminCall(stack, 'GET', '/admin/api/orders?client=shop');
    expect([401, 302]).toContain(anonymous.status);
  });
});
