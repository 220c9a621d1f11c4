import { Client } from 'pg';
import { verifyCallback } from '@cardpull/client';
import { LedgerRepository } from '@cardpull/orders';
import { sleep, testPool, waitFor } from '@cardpull/testing';
import { withDb } from '../recovery/support/recovery';
import { startReceiver } from '../support/receiver';
import { BalanceDrift } from '../../apps/worker/src/partner/balance-drift.service';
import { ADMIN_ENV, ALICE, VICTOR, adminCall, csrfOf, login } from '../admin/support/admin';
import { scrape, valueOf, workerUrl } from '../observability/support';
import { createOrder, startStack, useStack, waitForOrder, type Stack } from '../support/stack';

/**
 * Issue 24, item 3: the partner's balance against what the ledger explains. The check runs at the worker's
 * start (the ledger's float is opened at the partner's balance) and then once per interval; here the
 * interval is an hour and the test takes each sample itself, so that nothing moves between its steps.
 */
describe('balance drift: the partner balance checked against the ledger', () => {
  const stack = useStack({ env: { ...ADMIN_ENV, BALANCE_DRIFT_INTERVAL_MS: '3600000', RUNWAY_WINDOW_MS: '60000' }, beforeClose: () => pg.end() });
  let pg: Client;
  let drift: BalanceDrift;
  let cookie: string;
  beforeAll(async () => {
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    drift = stack.worker!.get(BalanceDrift);
    cookie = await login(stack, ALICE);
  });

  const partnerBalance = async () => Math.round((await stack.sim.control.state()).balance * 100);
  const ledger = async () => {
    const { rows } = await pg.query<{ account: string; balance: string }>(`SELECT account::text, sum(amount) AS balance FROM ledger_entries GROUP BY account`);
    return Object.fromEntries(rows.map((r) => [r.account, Number(r.balance)]));
  };

  it("the first sample, at the worker's start, opens the ledger's float at the partner's balance", async () => {
    const opening = await waitFor('the opening sample', async () => {
      const { rows } = await pg.query(`SELECT state, partner_balance FROM balance_samples ORDER BY id LIMIT 1`);
      return rows[0] ?? null;
    });
    expect(opening).toEqual({ state: 'opening', partner_balance: String(await partnerBalance()) });
    const { rows } = await pg.query(`SELECT kind, actor, reason FROM ledger_transactions WHERE kind = 'opening_balance'`);
    expect(rows).toEqual([{ kind: 'opening_balance', actor: 'worker:balance-drift', reason: expect.stringMatching(/first drift sample/) }]);
    expect((await ledger()).float).toBe(await partnerBalance());
  });

  it('cards stored at their cost move the ledger as the partner drew them: no drift', async () => {
    for (const amount of [1000, 2500]) await waitForOrder(stack, (await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount })).id);
    const sample = await drift.sample();
    expect(sample).toMatchObject({ state: 'ok', drift: 0, partnerBalance: await partnerBalance() });
    const l = await ledger();
    expect(l.float! + (l.reserved ?? 0) + (l.in_doubt ?? 0)).toBe(await partnerBalance());
  });

  it('an unexplained charge raises the drift within one sample: metric, log, page with the orders of the window, audit row; an adjustment explains it and the next sample clears it', async () => {
    const { id } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 1200 });
    await waitForOrder(stack, id);
    await stack.sim.control.charge(50, 'a fee nobody told us about');
    const sample = await drift.sample();
    expect(sample).toMatchObject({ state: 'drift', drift: -5000, windowFrom: expect.any(Date) });

    await waitFor('the drift gauge', async () => valueOf((await scrape(workerUrl(stack))).samples, 'cardpull_balance_drift') === -5000 || null);
    expect(stack.logs.text).toMatch(/"alert":"balance_drift"/);
    const page = await adminCall(stack, 'GET', '/admin', { cookie, html: true });
    expect(page.text).toMatch(/id="balance-drift" data-drift="-5000"/);
    expect(page.text).toContain(`data-drift-order="${id}"`);
    const { rows: audit } = await pg.query(`SELECT state, drift FROM balance_samples ORDER BY id DESC LIMIT 1`);
    expect(audit).toEqual([{ state: 'drift', drift: '-5000' }]);

    // The operator asks the partner, then records the fee as an adjustment, with the reason.
    const moved = await adminCall(stack, 'POST', '/admin/ledger/movements', {
      cookie,
      form: { csrf: csrfOf(page.text), kind: 'adjustment', amount: '-50.00', reason: 'partner ticket 4711: monthly fee' },
    });
    expect(moved.status).toBe(303);
    const { rows } = await pg.query(`SELECT t.kind, t.actor, t.reason, e.account::text, e.amount FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id WHERE t.kind = 'adjustment' ORDER BY e.account::text`);
    expect(rows).toEqual([
      { kind: 'adjustment', actor: 'admin:alice', reason: 'partner ticket 4711: monthly fee', account: 'adjustments', amount: '5000' },
      { kind: 'adjustment', actor: 'admin:alice', reason: 'partner ticket 4711: monthly fee', account: 'float', amount: '-5000' },
    ]);
    expect(await drift.sample()).toMatchObject({ state: 'ok', drift: 0 });
    // (The metrics read Postgres at most once per OPERATIONS_CACHE_MS: the next read has the new sample.)
    await waitFor('the drift gauge back to 0', async () => valueOf((await scrape(workerUrl(stack))).samples, 'cardpull_balance_drift') === 0 || null);
    expect(stack.logs.text).toMatch(/"alert":"balance_drift_cleared"/);
    expect((await adminCall(stack, 'GET', '/admin', { cookie, html: true })).text).not.toMatch(/id="balance-drift"/);
  });

  it('a top-up the operator records is no drift', async () => {
    const page = await adminCall(stack, 'GET', '/admin', { cookie, html: true });
    await stack.sim.control.setBalance((await partnerBalance()) / 100 + 1000);
    const moved = await adminCall(stack, 'POST', '/admin/ledger/movements', { cookie, form: { csrf: csrfOf(page.text), kind: 'top_up', amount: '1000', reason: 'wire 2026-11-28' } });
    expect(moved.status).toBe(303);
    expect(await drift.sample()).toMatchObject({ state: 'ok', drift: 0 });
  });

  it('runway: a float that lasts minutes at the recent spend is below (metric, log, page); a top-up brings it back (recovered)', async () => {
    const page = await adminCall(stack, 'GET', '/admin', { cookie, html: true });
    const record = (kind: string, amount: string, reason: string) => adminCall(stack, 'POST', '/admin/ledger/movements', { cookie, form: { csrf: csrfOf(page.text), kind, amount, reason } });
    // The partner takes all but 100.00 (a withdrawal the operator records): the float is about 100.00.
    const taken = (await partnerBalance()) - 10_000;
    await stack.sim.control.charge(taken / 100, 'withdrawal');
    expect((await record('adjustment', (-taken / 100).toFixed(2), 'withdrawal to the treasury')).status).toBe(303);
    for (const amount of [2500, 2500, 2500]) await waitForOrder(stack, (await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount })).id);
    const low = await drift.sample();
    expect(low).toMatchObject({ state: 'ok', runwayState: 'below' });
    expect(low!.runwayHours!).toBeLessThan(1);
    expect(low!.spendPerMinute).toBeGreaterThan(0);
    expect(stack.logs.text).toMatch(/"alert":"runway_below"/);
    await waitFor('the runway gauges', async () => {
      const { samples } = await scrape(workerUrl(stack));
      return valueOf(samples, 'cardpull_runway_state') === 2 && (valueOf(samples, 'cardpull_runway_hours') ?? 99) < 1 ? true : null;
    });
    expect((await adminCall(stack, 'GET', '/admin', { cookie, html: true })).text).toMatch(/id="runway" data-runway-state="below"/);

    await stack.sim.control.setBalance((await partnerBalance()) / 100 + 1_000_000);
    expect((await record('top_up', '1000000', 'wire 2026-11-28 #2')).status).toBe(303);
    expect(await drift.sample()).toMatchObject({ state: 'ok', runwayState: 'ok' });
    expect(stack.logs.text).toMatch(/"alert":"runway_recovered"/);
  });

  it('the form refuses a movement without a reason, a top-up below zero, and a viewer', async () => {
    const page = await adminCall(stack, 'GET', '/admin', { cookie, html: true });
    const count = async () => Number((await pg.query(`SELECT count(*) AS n FROM ledger_transactions`)).rows[0].n);
    const before = await count();
    for (const form of [
      { kind: 'top_up', amount: '10', reason: '' },
      { kind: 'top_up', amount: '-10', reason: 'oops' },
      { kind: 'adjustment', amount: '1e3', reason: 'not a number' },
      { kind: 'spent', amount: '10', reason: 'not a kind' },
    ]) {
      const res = await adminCall(stack, 'POST', '/admin/ledger/movements', { cookie, form: { csrf: csrfOf(page.text), ...form } });
      expect(res.status).toBe(303);
    }
    const viewer = await login(stack, VICTOR);
    const viewerPage = await adminCall(stack, 'GET', '/admin', { cookie: viewer, html: true });
    expect(viewerPage.text).not.toMatch(/id="ledger-movement"/);
    const refused = await adminCall(stack, 'POST', '/admin/ledger/movements', { cookie: viewer, form: { csrf: 'x', kind: 'top_up', amount: '10', reason: 'viewer' } });
    expect(refused.status).toBe(403);
    expect(await count()).toBe(before);
  });
});

/** Issue 24, item 4: a subscribed client gets a signed `balance.low` callback when the runway gets low. */
describe('balance.low: a signed callback to the clients that subscribe', () => {
  const SECRET = 'shop-callback-secret-0001';
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let stack: Stack;
  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack({
      env: {
        BALANCE_DRIFT_INTERVAL_MS: '3600000',
        RUNWAY_WINDOW_MS: '60000',
        CALLBACK_URLS: `shop=${receiver.url}/hooks/money`,
        CALLBACK_SECRETS: `shop=${SECRET}`,
        BALANCE_LOW_CALLBACK_CLIENTS: 'shop',
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it('the runway falls below: one balance.low, signed with the client\'s secret, to its default callback URL', async () => {
    const drift = stack.worker!.get(BalanceDrift);
    await waitFor('the opening sample', async () => (await withDb(stack, (db) => db.query(`SELECT 1 FROM balance_samples`))).rows.length > 0 || null);
    const pool = testPool(stack.db.url, 1);
    const ledger = new LedgerRepository(pool);
    try {
      // The float down to about 100.00, recorded as the partner's withdrawal would be.
      const balance = Math.round((await stack.sim.control.state()).balance * 100);
      await stack.sim.control.charge((balance - 10_000) / 100, 'withdrawal');
      await ledger.operatorMovement({ kind: 'adjustment', amount: -(balance - 10_000), reason: 'withdrawal to the treasury', actor: 'admin:test', partnerAccount: 'partner', currency: 'EUR' });
    } finally {
      await pool.end();
    }
    for (const amount of [2500, 2500, 2500]) await waitForOrder(stack, (await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount })).id);
    expect(await drift.sample()).toMatchObject({ runwayState: 'below' });
    // (The shop's orders are announced at the same default URL: order.completed.)
    const balanceLow = () => receiver.received.filter((r) => r.path === '/hooks/money' && r.headers['x-cardpull-event-type'] === 'balance.low');
    const got = await waitFor('the balance.low callback', async () => balanceLow()[0] ?? null);
    const event = verifyCallback(got.body, got.headers, SECRET);
    if (event.type !== 'balance.low') throw new Error(`expected balance.low, got ${event.type}`);
    expect(event).toMatchObject({ state: 'below', currency: 'EUR', partner_account: 'partner', thresholds_hours: { approaching: 24, below: 6 } });
    expect(event.runway_hours).toBeLessThan(1);
    // A sample in the same state sends nothing more.
    await drift.sample();
    await sleep(500);
    expect(balanceLow()).toHaveLength(1);
  });
});
