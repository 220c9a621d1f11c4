import { Client } from 'pg';
import { waitFor } from '@cardpull/testing';
import { startSimulator, type SimHandle } from '../support/simulator';
import { idemKey, startStack, type Stack } from '../support/stack';

const CATALOG_PATH = '/partners/v1/gift_cards';

/**
 * Issue 25: intake never tells a checkout that a real product does not exist because the catalog could not
 * be read. At a cold start against a failing partner (no catalog in Postgres, the API's own read refused) an
 * order naming a real gift card is answered 503 catalog_unavailable with Retry-After, not 404, and the read it
 * starts runs in the background (the request does not wait on the partner); 404 only when a successful read
 * lacks the code. The API runs alone here (no worker stores the catalog for it).
 */
describe('catalog unavailable: 503 with Retry-After, never a 404 for a code the API could not check', () => {
  let sim: SimHandle;
  let stack: Stack;
  let pg: Client;
  const order = (gift_card_code: string, key = idemKey('cold')) => stack.call('POST', '/v1/orders', { body: { gift_card_code, amount: 1000 }, headers: { 'idempotency-key': key } });

  beforeAll(async () => {
    sim = await startSimulator();
    // Every partner read fails (503) while the API starts: its catalog read at start gets nothing.
    await sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', status: 503 });
    stack = await startStack({ sim, worker: false, env: { PARTNER_TIMEOUT_READ_MS: '10000' } });
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await stack?.close();
    await sim?.close();
  });

  it('cold start against a failing partner: an order for a real gift card is 503 catalog_unavailable with Retry-After (never 404), so is an unknown code, and nothing is stored', async () => {
    const { rows } = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_gift_cards');
    expect(rows[0]!.n).toBe(0);
    for (const code of ['ACME-BOOKS-FIXED', 'NO-SUCH-CARD']) {
      const refused = await order(code);
      expect([refused.status, refused.headers['retry-after'], refused.body.errors[0]]).toEqual([
        503,
        '5',
        { code: 'catalog_unavailable', message: `The partner's catalog could not be read, so gift card ${code} could not be checked; nothing was done: try again in 5 s` },
      ]);
    }
    expect((await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]!.n).toBe(0);
  });

  it('the catalog routes say the same: no empty list, no 404 while the catalog could not be read', async () => {
    for (const path of ['/v1/gift-cards', '/v1/gift-cards/ACME-BOOKS-FIXED', '/v1/inventories/ACME-BOOKS-FIXED']) {
      const res = await stack.call('GET', path);
      expect([path, res.status, res.headers['retry-after'], res.body.errors[0].code]).toEqual([path, 503, '5', 'catalog_unavailable']);
    }
  });

  it('the request does not wait on the partner: it is answered while the catalog read it started is still running; once the read succeeds, the same order is accepted', async () => {
    await sim.control.clearFaults();
    // The partner answers, slowly: a read started by a miss is still running when its request is answered.
    await sim.control.addFault({ endpoint: 'any', mode: 'latency', latency_ms: 3000 });
    const key = idemKey('cold-retry');
    const answered = await waitFor('an order answered while its catalog read is under way', async () => {
      const res = await order('ACME-BOOKS-FIXED', key);
      if (res.status !== 503) return null;
      const { requests } = await sim.control.ledger();
      return requests.some((r) => r.path === CATALOG_PATH && r.finished_at === null) ? res : null;
    }, 20_000, 200);
    expect(answered.body.errors[0].code).toBe('catalog_unavailable');
    await sim.control.clearFaults();
    const accepted = await waitFor('the same order accepted once the catalog is read', async () => {
      const res = await order('ACME-BOOKS-FIXED', key);
      return res.status === 202 ? res : null;
    }, 20_000, 200);
    expect(accepted.body.order).toMatchObject({ gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, status: 'pending' });
    // Read successfully now: an unknown code is a 404, and the list answers.
    expect((await order('NO-SUCH-CARD')).body.errors[0].code).toBe('gift_card_not_found');
    expect((await stack.call('GET', '/v1/gift-cards')).body.gift_cards.map((g: { code: string }) => g.code)).toContain('ACME-BOOKS-FIXED');
  });

  it('after a failed read an unknown code is 503 again until a read succeeds; a gift card the catalog lists is still accepted', async () => {
    await sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', status: 503 });
    // Each miss starts a read (at most one per 5 s); once one has failed, the API cannot vouch for a code it lacks.
    const refused = await waitFor('an unknown code refused 503 after a failed read', async () => {
      const res = await order('NOT-LISTED-YET');
      return res.status === 503 ? res : null;
    }, 20_000, 200);
    expect([refused.headers['retry-after'], refused.body.errors[0].code]).toEqual(['5', 'catalog_unavailable']);
    expect((await order('ACME-BOOKS-FIXED')).status).toBe(202);
    await sim.control.clearFaults();
    await waitFor('a successful read again: the unknown code is a 404', async () => (await order('NOT-LISTED-YET')).status === 404, 20_000, 200);
  });
});
