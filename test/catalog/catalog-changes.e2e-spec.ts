import { Client } from 'pg';
import { CallbackNotConfiguredError, CardpullClient, verifyCallback } from '@cardpull/client';
import { CatalogSource } from '@cardpull/orders';
import { expectInvariants, waitFor } from '@cardpull/testing';
import { CatalogService } from '../../apps/api/src/catalog/catalog.service';
import { scrape, valueOf, workerUrl } from '../observability/support';
import { startReceiver } from '../support/receiver';
import { KEYS, createOrder, idemKey, startStack, waitForOrder, type Stack } from '../support/stack';

const SECRETS = { shop: 'shop-catalog-secret-0001', nocards: 'nocards-catalog-secret-01', quitter: 'quitter-catalog-secret-01' };
const QUITTER_KEY = 'quitter-key-00001';

/**
 * Issue 25, the catalog change feed: every store of the partner's catalog is compared with the one stored
 * before it, in the same transaction, and each change is recorded once with its time; subscribed clients get
 * one signed `catalog.changed` per batch through the callbacks' outbox; intake refuses what vanished, naming
 * when, while orders accepted before keep their snapshot and go on. The refreshes are driven by the test (the
 * interval is an hour): the API's CatalogService.refresh() reads the simulator and stores what it read, as the
 * worker's CatalogRefresh does.
 */
describe('catalog change feed: changes recorded once, announced to subscribers, refused at intake', () => {
  let stack: Stack;
  let pg: Client;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const refresh = async () => expect(await stack.api!.get(CatalogService).refresh()).toBe(true);
  const changes = async () =>
    (await pg.query<{ id: string; code: string; kind: string; before: unknown; after: unknown; detail: unknown; batch: string; at: Date }>(
      'SELECT id::text, gift_card_code AS code, kind, before, after, detail, batch_id AS batch, detected_at AS at FROM catalog_changes ORDER BY id',
    )).rows;
  const order = (gift_card_code: string, amount: number, key = idemKey('feed')) => stack.call('POST', '/v1/orders', { body: { gift_card_code, amount }, headers: { 'idempotency-key': key } });

  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack({
      env: {
        CATALOG_REFRESH_INTERVAL_MS: '3600000',
        API_KEYS: [`shop:${KEYS.shop}`, `nocards:${KEYS.noCards}:orders:write+orders:read`, `reader:${KEYS.readOnly}:orders:read`, `other:${KEYS.other}`, `quitter:${QUITTER_KEY}`].join(','),
        CALLBACK_URLS: `shop=${receiver.url}/shop,nocards=${receiver.url}/nocards,quitter=${receiver.url}/quitter`,
        CALLBACK_SECRETS: Object.entries(SECRETS).map(([c, s]) => `${c}=${s}`).join(','),
      },
    });
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    // The worker's first refresh (at its start) has run: from here on only the test stores the catalog.
    await waitFor('the worker\'s first catalog refresh', async () => {
      const { rows } = await pg.query(`SELECT 1 FROM periodic_task_runs WHERE task = 'catalog refresh' AND finished_at IS NOT NULL`);
      return rows.length > 0;
    });
  });
  afterAll(async () => {
    try {
      if (stack) await expectInvariants(stack);
    } finally {
      await pg?.end();
      await stack?.close();
      await receiver?.close();
    }
  });

  it('the first store records nothing (nothing to compare with), and neither does a read of an unchanged catalog', async () => {
    const { rows } = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_gift_cards');
    expect(rows[0]!.n).toBeGreaterThan(4);
    expect(await changes()).toEqual([]);
    await refresh();
    await stack.worker!.get(CatalogSource).refresh();
    expect(await changes()).toEqual([]);
  });

  it('subscriptions: PUT subscribes once (201, then 200), GET lists, DELETE unsubscribes (204); a client without a callback URL gets 422 callback_not_configured; the scope is subscriptions:write', async () => {
    const put = (key: string, event = 'catalog.changed') => stack.call('PUT', `/v1/subscriptions/${event}`, { key });
    const first = await put(KEYS.shop);
    expect([first.status, first.body]).toEqual([201, { subscription: { event_type: 'catalog.changed', created_at: expect.any(String), callback_url: `${receiver.url}/shop` }, created: true }]);
    expect(await put(KEYS.shop)).toMatchObject({ status: 200, body: { created: false, subscription: { created_at: first.body.subscription.created_at } } });
    expect((await stack.call('GET', '/v1/subscriptions')).body).toEqual({ subscriptions: [first.body.subscription] });
    // The same through @cardpull/client.
    const client = new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.shop });
    expect(await client.subscriptions()).toEqual([first.body.subscription]);
    expect(await client.subscribe('catalog.changed')).toEqual({ subscription: first.body.subscription, created: false });
    await expect(new CardpullClient({ baseUrl: stack.apiUrl, apiKey: KEYS.other }).subscribe('catalog.changed')).rejects.toBeInstanceOf(CallbackNotConfiguredError);

    const unconfigured = await put(KEYS.other);
    expect([unconfigured.status, unconfigured.body.errors[0].code]).toEqual([422, 'callback_not_configured']);
    expect(unconfigured.body.errors[0].message).toMatch(/no callback URL \(CALLBACK_URLS\)/);
    expect((await put(KEYS.noCards)).status).toBe(403); // orders:write+orders:read: no subscriptions:write
    expect((await stack.call('GET', '/v1/subscriptions', { key: KEYS.readOnly })).body).toEqual({ subscriptions: [] });
    expect((await put(KEYS.shop, 'order.completed')).body.errors[0].code).toBe('invalid_request');

    // quitter subscribes, then changes its mind: it gets nothing below.
    expect((await put(QUITTER_KEY)).status).toBe(201);
    expect((await stack.call('DELETE', '/v1/subscriptions/catalog.changed', { key: QUITTER_KEY })).status).toBe(204);
    expect((await stack.call('DELETE', '/v1/subscriptions/catalog.changed', { key: QUITTER_KEY })).status).toBe(204);
    expect((await stack.call('GET', '/v1/subscriptions', { key: QUITTER_KEY })).body).toEqual({ subscriptions: [] });
  });

  let replayKey: string;
  it('each kind of change is recorded once (two stores at once included), with its before and after; a discount moved less than the threshold is not a change', async () => {
    // An order accepted before its gift card is withdrawn (no stock: it waits in awaiting_stock).
    replayKey = idemKey('before-withdrawal');
    expect((await order('SOLD-OUT-FIXED', 1000, replayKey)).status).toBe(202);

    const sim = stack.sim.control;
    await sim.addGiftCard({ code: 'NEW-GIFT', name: 'New Gift card', brand: 'Newco', facial_values: { type: 'fixed', amounts: [1000, 2000] }, discount: 2 });
    await sim.removeGiftCard('SOLD-OUT-FIXED');
    await sim.changeGiftCard('ACME-BOOKS-FIXED', { facial_values: { type: 'fixed', amounts: [1000, 5000, 7500, 10000] } });
    await sim.changeGiftCard('EURO-TRAVEL-REGION', { code_pin: false, next_discounts: [{ value: 6.5, date: '2027-06-01T00:00:00.000+02:00' }, { value: 7, date: '2027-09-01T00:00:00.000Z' }] });
    await sim.changeGiftCard('FAST-FREE', { discount: 1 });
    await sim.changeGiftCard('NOVA-GAMES-FREE', { discount: 2.2 }); // 0.2 from 2: below the default threshold of 0.5
    // The API and the worker store the same read at once: the stores take turns, so each change is recorded once.
    await Promise.all([refresh(), stack.worker!.get(CatalogSource).refresh()]);

    const recorded = await changes();
    expect(recorded.map(({ code, kind, before, after, detail }) => ({ code, kind, before, after, detail }))).toEqual([
      { code: 'ACME-BOOKS-FIXED', kind: 'face_values_changed', before: { type: 'fixed', amounts: [1000, 2500, 5000, 10000] }, after: { type: 'fixed', amounts: [1000, 5000, 7500, 10000] }, detail: { withdrawn_amounts: [2500], added_amounts: [7500] } },
      { code: 'EURO-TRAVEL-REGION', kind: 'code_pin_changed', before: true, after: false, detail: null },
      {
        code: 'EURO-TRAVEL-REGION', kind: 'discount_scheduled',
        before: [{ value: 6.5, date: '2027-06-01T00:00:00.000+02:00' }],
        after: [{ value: 6.5, date: '2027-06-01T00:00:00.000+02:00' }, { value: 7, date: '2027-09-01T00:00:00.000Z' }],
        detail: { scheduled: [{ value: 7, date: '2027-09-01T00:00:00.000Z' }] },
      },
      { code: 'FAST-FREE', kind: 'discount_changed', before: 0, after: 1, detail: null },
      { code: 'NEW-GIFT', kind: 'added', before: null, after: { name: 'New Gift card', brand: 'Newco', facial_values: { type: 'fixed', amounts: [1000, 2000] }, discount: 2, code_pin: false }, detail: null },
      { code: 'SOLD-OUT-FIXED', kind: 'removed', before: expect.objectContaining({ name: 'Gone Shoes gift card', facial_values: { type: 'fixed', amounts: [1000, 2000] } }), after: null, detail: null },
    ]);
    expect(new Set(recorded.map((c) => c.batch)).size).toBe(1);

    // Read again, by the API and by the worker: nothing new.
    await refresh();
    await stack.worker!.get(CatalogSource).refresh();
    expect((await changes()).map((c) => c.id)).toEqual(recorded.map((c) => c.id));

    // Small moves add up: 2 -> 2.2 was none, 2.2 -> 2.6 is one, from the discount last announced (2).
    await sim.changeGiftCard('NOVA-GAMES-FREE', { discount: 2.6 });
    await refresh();
    const latest = (await changes()).slice(recorded.length);
    expect(latest.map(({ code, kind, before, after }) => ({ code, kind, before, after }))).toEqual([{ code: 'NOVA-GAMES-FREE', kind: 'discount_changed', before: 2, after: 2.6 }]);
  });

  it('cardpull_catalog_changes_total counts them by kind (from Postgres: the same on the API and the worker)', async () => {
    const expected = { added: 1, removed: 1, face_values_changed: 1, code_pin_changed: 1, discount_changed: 2, discount_scheduled: 1 };
    for (const base of [stack.apiUrl, workerUrl(stack)]) {
      const samples = await waitFor('the catalog change counter', async () => {
        const s = (await scrape(base)).samples;
        return valueOf(s, 'cardpull_catalog_changes_total', { kind: 'discount_changed' }) === 2 ? s : null;
      });
      expect(Object.fromEntries(Object.keys(expected).map((kind) => [kind, valueOf(samples, 'cardpull_catalog_changes_total', { kind })]))).toEqual(expected);
    }
  });

  it('catalog.changed: one signed event per batch to the subscribed client, with the changes as recorded; none to a client that is not (or no longer) subscribed', async () => {
    const recorded = await changes();
    // Every callback to shop is signed with its secret; the order accepted before the withdrawal (waiting for
    // stock) may also have failed by now on a slow machine (its order.failed goes to the same address).
    const all = await waitFor('two catalog.changed callbacks to shop', () => {
      const got = receiver.received.filter((r) => r.path === '/shop').map((e) => ({ raw: e, event: verifyCallback(e.body, e.headers, SECRETS.shop) }));
      return got.filter((e) => e.event.type === 'catalog.changed').length >= 2 ? got : null;
    });
    expect(all.filter((e) => e.event.type !== 'order.failed').map((e) => e.event.type)).toEqual(['catalog.changed', 'catalog.changed']);
    const events = all.filter((e) => e.event.type === 'catalog.changed').map((e) => e.raw);
    const [first, second] = all.map((e) => e.event).filter((e) => e.type === 'catalog.changed').map((e) => (e.type === 'catalog.changed' ? e : null));
    expect(first!.changes.map((c) => [c.id, c.gift_card_code, c.kind])).toEqual(recorded.slice(0, 6).map((c) => [c.id, c.code, c.kind]));
    expect(first!.detected_at).toBe(recorded[0]!.at.toISOString());
    const face = first!.changes[0]!;
    expect(face.kind === 'face_values_changed' && [face.withdrawn_amounts, face.added_amounts]).toEqual([[2500], [7500]]);
    expect(second!.changes.map((c) => [c.gift_card_code, c.kind, c.before, c.after])).toEqual([['NOVA-GAMES-FREE', 'discount_changed', 2, 2.6]]);
    expect(events[0]!.headers['x-cardpull-event-type']).toBe('catalog.changed');
    // Written in the outbox for shop alone (nocards has a URL but never subscribed; quitter unsubscribed).
    const { rows } = await pg.query<{ client: string; state: string }>(`SELECT client, state FROM callback_events WHERE type = 'catalog.changed' ORDER BY created_at`);
    expect(rows).toEqual([{ client: 'shop', state: 'delivered' }, { client: 'shop', state: 'delivered' }]);
    expect(receiver.received.filter((r) => r.path !== '/shop')).toEqual([]);
  });

  it('intake refuses a withdrawn gift card (422 gift_card_withdrawn) and a withdrawn amount (422 amount_withdrawn), naming when; a replay of an order accepted before is still its order', async () => {
    const recorded = await changes();
    const removedAt = recorded.find((c) => c.kind === 'removed')!.at.toISOString();
    const faceAt = recorded.find((c) => c.kind === 'face_values_changed')!.at.toISOString();

    const gone = await order('SOLD-OUT-FIXED', 1000);
    expect([gone.status, gone.body.errors[0]]).toEqual([422, { code: 'gift_card_withdrawn', message: `Gift card SOLD-OUT-FIXED was withdrawn from the partner's catalog at ${removedAt}` }]);
    const amount = await order('ACME-BOOKS-FIXED', 2500);
    expect([amount.status, amount.body.errors[0]]).toEqual([
      422,
      { code: 'amount_withdrawn', message: `Amount 2500 of gift card ACME-BOOKS-FIXED was withdrawn from the partner's catalog at ${faceAt}; allowed amounts are 1000, 5000, 7500, 10000` },
    ]);
    // An amount never offered is still invalid_amount; a code never listed still gift_card_not_found.
    expect((await order('ACME-BOOKS-FIXED', 1234)).body.errors[0].code).toBe('invalid_amount');
    expect((await order('NO-SUCH-CARD', 1000)).body.errors[0].code).toBe('gift_card_not_found');
    // The read routes say it too.
    const card = await stack.call('GET', '/v1/gift-cards/SOLD-OUT-FIXED');
    expect([card.status, card.body.errors[0].message]).toEqual([404, `Gift card SOLD-OUT-FIXED not found: it was withdrawn from the partner's catalog at ${removedAt}`]);

    // The same Idempotency-Key and body as the order accepted before the withdrawal: its order, not a refusal.
    const replay = await order('SOLD-OUT-FIXED', 1000, replayKey);
    expect([replay.status, replay.body.order.gift_card_code]).toEqual([200, 'SOLD-OUT-FIXED']);

    // Listed again: recorded as added, and ordered again. The misses above may have started a read of the
    // catalog in the background; a refresh joins a read in flight, so that one ends first (else the refresh
    // after the add could be that earlier read, begun before the card was listed).
    await refresh();
    await stack.sim.control.addGiftCard({ code: 'SOLD-OUT-FIXED', facial_values: { type: 'fixed', amounts: [1000, 2000] } });
    await refresh();
    expect((await changes()).at(-1)).toMatchObject({ code: 'SOLD-OUT-FIXED', kind: 'added' });
    const again = await order('SOLD-OUT-FIXED', 1000);
    expect(again.status).toBe(202);
    expect((await waitForOrder(stack, again.body.order.id)).status).toBe('completed');
  });

  it('an order accepted before a discount change completes at the cost of its snapshot; an order after it is priced at the new discount', async () => {
    await stack.stopWorker();
    const before = await createOrder(stack, { gift_card_code: 'EURO-TRAVEL-REGION', amount: 2000 });
    await stack.sim.control.changeGiftCard('EURO-TRAVEL-REGION', { discount: 20 });
    await refresh();
    expect((await changes()).at(-1)).toMatchObject({ code: 'EURO-TRAVEL-REGION', kind: 'discount_changed', before: 5, after: 20 });
    const after = await createOrder(stack, { gift_card_code: 'EURO-TRAVEL-REGION', amount: 2000 });
    await stack.startWorker();
    for (const { id } of [before, after]) expect((await waitForOrder(stack, id)).status).toBe('completed');

    const priced = async (id: string) =>
      (await pg.query<{ discount_ppm: number; cost: number; discount: number; spent: string }>(
        `SELECT o.discount_ppm, o.cost, s.discount,
                (SELECT e.amount FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.order_id = o.id AND t.kind = 'card_stored' AND e.account = 'spent') AS spent
           FROM orders o JOIN catalog_snapshots s ON s.id = o.catalog_snapshot WHERE o.id = $1`,
        [id],
      )).rows[0];
    // 5 % off 2000 when it was accepted: 1900, stored at 1900 whatever the discount at its pull.
    expect(await priced(before.id)).toEqual({ discount_ppm: 50_000, cost: 1900, discount: 5, spent: '1900' });
    expect(await priced(after.id)).toEqual({ discount_ppm: 200_000, cost: 1600, discount: 20, spent: '1600' });
  });
});
