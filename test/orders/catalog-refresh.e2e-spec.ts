import { Client } from 'pg';
import { waitFor } from '@cardpull/testing';
import { KEYS, idemKey, startStack, type Stack } from '../support/stack';

/**
 * The catalog is read from the partner by the worker (CatalogRefresh, at start and every
 * CATALOG_REFRESH_INTERVAL_MS) into Postgres; the API validates orders against that copy, so an API that
 * starts while the partner is unreachable still accepts valid orders and refuses unknown gift cards.
 */
describe('catalog: the worker keeps it in Postgres; the API validates against the stored copy', () => {
  let worker: Stack;
  let api: Stack | undefined;
  afterAll(async () => {
    await api?.close();
    await worker?.close();
  });

  it('the worker alone stores the catalog; an API that cannot reach the partner validates orders against it', async () => {
    worker = await startStack({ api: false });
    const pg = new Client({ connectionString: worker.db.url });
    await pg.connect();
    try {
      const codes = await waitFor('the worker to store the catalog', async () => {
        const { rows } = await pg.query<{ code: string }>('SELECT code FROM catalog_gift_cards ORDER BY code');
        return rows.length ? rows.map((r) => r.code) : null;
      });
      expect(codes).toContain('ACME-BOOKS-FIXED');
    } finally {
      await pg.end();
    }
    // Nothing listens on port 9: every partner call of this API fails.
    api = await startStack({ worker: false, db: worker.db, sim: worker.sim, env: { PARTNER_BASE_URL: 'http://127.0.0.1:9' } });
    const order = (gift_card_code: string, amount: number) =>
      api!.call('POST', '/v1/orders', { key: KEYS.shop, body: { gift_card_code, amount }, headers: { 'idempotency-key': idemKey('catalog') } });
    expect((await order('ACME-BOOKS-FIXED', 1000)).status).toBe(202);
    expect((await order('ACME-BOOKS-FIXED', 1234)).body.errors?.[0]?.code).toBe('invalid_amount');
    expect((await order('NO-SUCH-CARD', 1000)).body.errors?.[0]?.code).toBe('gift_card_not_found');
  });
});
