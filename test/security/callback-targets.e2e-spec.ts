import { Client } from 'pg';
import { publicOnlyLookup } from '@cardpull/config';
import { waitFor } from '@cardpull/testing';
import { startReceiver } from '../support/receiver';
import { KEYS, idemKey, insertOrder, useStack } from '../support/stack';

/**
 * No server-side request forgery through callbacks (issue 11, opening 2): outside local runs
 * (CALLBACK_ALLOW_LOCAL off, the default) a client cannot make the worker call a loopback, private,
 * link-local or unique-local address, over http: or https:, by address or by a name that resolves to one;
 * a client with an allow-list cannot name another host. A real server on 127.0.0.1 stands for what must
 * never be reached (a database, the cloud's metadata address, the simulator's control API).
 */
describe('security: callbacks never reach a private address, and only https: outside local runs', () => {
  /** A server on 127.0.0.1 that must never be called: it counts every connection and request. */
  let trap: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    trap = await startReceiver();
  });
  afterAll(() => trap?.close());
  const stack = useStack({
    env: {
      CALLBACK_ALLOW_LOCAL: 'false',
      CALLBACK_SECRETS: 'shop:shop-callback-secret-0001,other:other-callback-secret-01',
      CALLBACK_ALLOWED_HOSTS: 'other=hooks.other.example|*.other.example',
      CALLBACK_MAX_ATTEMPTS: '2',
      CALLBACK_BACKOFF_MS: '50',
    },
  });

  const order = (callback_url: string, key = KEYS.shop) =>
    stack.call('POST', '/v1/orders', { key, body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000, callback_url }, headers: { 'idempotency-key': idemKey('ssrf') } });

  it.each([
    ['http: to 127.0.0.1', () => `http://127.0.0.1:${trap.port}/hook`, 'must be an https URL'],
    ['https: to 127.0.0.1', () => `https://127.0.0.1:${trap.port}/hook`, 'loopback, private or link-local'],
    ['the metadata address', () => 'https://169.254.169.254/latest/meta-data/', 'loopback, private or link-local'],
    ['a private network', () => 'https://10.1.2.3/hook', 'loopback, private or link-local'],
    ['a home network', () => 'https://192.168.1.20/hook', 'loopback, private or link-local'],
    ['IPv6 loopback', () => 'https://[::1]/hook', 'loopback, private or link-local'],
    ['IPv6 unique-local', () => 'https://[fd12:3456::1]/hook', 'loopback, private or link-local'],
    ['IPv6 link-local', () => 'https://[fe80::1]/hook', 'loopback, private or link-local'],
    ['IPv4-mapped IPv6', () => 'https://[::ffff:10.0.0.1]/hook', 'loopback, private or link-local'],
    ['localhost by name', () => `https://localhost:${trap.port}/hook`, 'loopback, private or link-local'],
    ['credentials in the URL', () => 'https://user:pass@hooks.shop.example/hook', 'must not carry credentials'],
  ])('intake refuses %s (422 callback_url_refused)', async (_what, url, why) => {
    const res = await order(url());
    expect([res.status, res.body.errors?.[0]?.code]).toEqual([422, 'callback_url_refused']);
    expect(res.body.errors[0].message).toContain(why);
  });

  it('a client with an allow-list may name only its hosts', async () => {
    const refused = await order('https://evil.example.net/hook', KEYS.other);
    expect([refused.status, refused.body.errors?.[0]?.code]).toEqual([422, 'callback_url_refused']);
    expect(refused.body.errors[0].message).toContain("not in this client's CALLBACK_ALLOWED_HOSTS");
    expect((await order('https://eu.hooks.other.example/hook', KEYS.other)).status).toBe(202);
    expect((await order('https://hooks.other.example/hook', KEYS.other)).status).toBe(202);
  });

  it.each([
    ['by address over http:', () => `http://127.0.0.1:${trap.port}/hook`],
    ['by address over https:', () => `https://127.0.0.1:${trap.port}/hook`],
    ['by the name localhost, with a trailing dot', () => `https://localhost.:${trap.port}/hook`],
  ])('the worker never calls a private address a stored order names (%s: stored before the rules, or settings changed since intake)', async (_what, url) => {
    const { id } = await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1000, callbackUrl: url() });
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      const event = await waitFor('the callback to be given up', async () => {
        const { rows } = await pg.query(
          `SELECT e.state, (SELECT string_agg(d.error, ' | ') FROM callback_deliveries d WHERE d.event_id = e.id) AS last_error FROM callback_events e WHERE e.order_id = $1`,
          [id],
        );
        return rows[0]?.state === 'failed' ? rows[0] : null;
      }, 20_000);
      expect(String(event.last_error)).toContain('callback refused');
    } finally {
      await pg.end();
    }
    expect(trap.hits()).toEqual({ connections: 0, requests: 0 });
  });

  it('a name is checked on the address it resolves to, when the worker connects (no DNS rebinding): localhost is refused', async () => {
    const resolved = await new Promise<{ err: (Error & { code?: string }) | null }>((done) => publicOnlyLookup('localhost', {}, (err) => done({ err })));
    expect(resolved.err?.code).toBe('ECALLBACKREFUSED');
    expect(resolved.err?.message).toMatch(/callback refused: localhost resolves to (127\.0\.0\.1|::1)/);
  });
});
