import { loadServiceConfig } from '@cardpull/config';
import { AdminSessions } from '../../apps/api/src/admin/auth/admin-sessions.service';
import { idemKey, startStack, type Stack } from '../support/stack';
import { ADMIN_ENV, ALICE, CAROL, VICTOR, adminCall, csrfOf, login, sessionSetCookie } from './support/admin';

const SOME_ORDER = '01900000-0000-7000-8000-000000000000';

describe('operations surface: admin authentication (HTTP level)', () => {
  let stack: Stack;
  let alice: string;
  let victor: string;
  beforeAll(async () => {
    stack = await startStack({ worker: false, env: ADMIN_ENV });
    [alice, victor] = await Promise.all([login(stack, ALICE), login(stack, VICTOR)]);
  });
  afterAll(() => stack?.close());

  const pages = ['/admin', '/admin/search?q=abc', `/admin/orders/${SOME_ORDER}`, '/admin/queues', '/admin/queues/queue/orders', '/admin/queues/static/favicon-32x32.png', '/admin/no-such-page'];
  const calls: [string, string][] = [
    ['GET', '/admin/queues/api/queues'],
    ['POST', '/admin/logout'],
    ['POST', `/admin/orders/${SOME_ORDER}/redrive`],
    ['POST', `/admin/orders/${SOME_ORDER}/mark-failed`],
    ['POST', `/admin/orders/${SOME_ORDER}/reveal-card`],
    ['PUT', '/admin/queues/api/queues/orders/pause'],
    ['PUT', '/admin/queues/api/queues/pause'],
  ];

  describe('every /admin route needs a session (only the login page is public)', () => {
    it.each(pages)('a browser opening %s without a session is sent to the login page', async (path) => {
      const res = await adminCall(stack, 'GET', path, { html: true });
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/^\/admin\/login\?next=%2Fadmin/);
    });

    it.each([...pages.map((p) => ['GET', p] as [string, string]), ...calls])('%s %s without a session: 401 in the envelope', async (method, path) => {
      const res = await adminCall(stack, method, path, method === 'GET' ? {} : { form: { csrf: 'x', reason: 'r' } });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ errors: [{ code: 'unauthorized', message: expect.any(String) }], status: 'unauthorized' });
    });

    it('a percent-encoded path does not slip past the guard', async () => {
      for (const path of ['/%61dmin/queues/api/queues', '/admin/%71ueues/api/queues', '/admin/queues/api/%71ueues']) {
        const res = await adminCall(stack, 'GET', path);
        expect([401, 404]).toContain(res.status);
        expect(res.text).not.toContain('"orders"');
      }
    });

    it('an API key does not open it', async () => {
      const res = await adminCall(stack, 'GET', '/admin', { headers: { authorization: 'Bearer shop-key-0001' } });
      expect(res.status).toBe(401);
    });

    it('the login page is public, with no script and a strict content security policy', async () => {
      const res = await adminCall(stack, 'GET', '/admin/login', { html: true });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('name="password"');
      expect(res.text).not.toContain('<script');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
    });
  });

  describe('POST /admin/login checks ADMIN_USERS and sets the signed session cookie', () => {
    it('a wrong password or an unknown user: 401, the form again, no cookie', async () => {
      for (const form of [{ user: ALICE.user, password: 'wrong-password' }, { user: 'mallory', password: ALICE.password }, { user: ALICE.user, password: '' }]) {
        const res = await adminCall(stack, 'POST', '/admin/login', { form });
        expect(res.status).toBe(401);
        expect(res.text).toContain('Wrong user name or password');
        expect(sessionSetCookie(res)).toBeUndefined();
      }
    });

    it('the right password: 303 to the page asked for, cookie HttpOnly, SameSite=Strict, Path=/admin', async () => {
      const res = await adminCall(stack, 'POST', '/admin/login', { form: { ...ALICE, next: '/admin/search?q=x' } });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/admin/search?q=x');
      const cookie = sessionSetCookie(res)!;
      expect(cookie).toMatch(/; Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=28800/);
      const home = await adminCall(stack, 'GET', '/admin', { cookie: cookie.split(';')[0] });
      expect(home.status).toBe(200);
      expect(home.text).toContain('alice (admin)');
    });

    it('never redirects off the operations surface after login', async () => {
      for (const next of ['https://evil.example.com/', '//evil.example.com/admin', '/v1/orders', '/admin/../v1']) {
        const res = await adminCall(stack, 'POST', '/admin/login', { form: { ...ALICE, next } });
        expect(res.headers.location).toBe('/admin');
      }
    });

    it('ten failures for a user from one address block its logins for a while, the right password included', async () => {
      for (let i = 0; i < 10; i++) expect((await adminCall(stack, 'POST', '/admin/login', { form: { user: CAROL.user, password: `guess-${i}` } })).status).toBe(401);
      const blocked = await adminCall(stack, 'POST', '/admin/login', { form: CAROL });
      expect(blocked.status).toBe(429);
      expect(sessionSetCookie(blocked)).toBeUndefined();
      expect((await adminCall(stack, 'POST', '/admin/login', { form: ALICE })).status).toBe(303); // others are not locked out
    });

    it('a login posted from another site is refused', async () => {
      const res = await adminCall(stack, 'POST', '/admin/login', { form: ALICE, headers: { 'sec-fetch-site': 'cross-site' } });
      expect(res.status).toBe(403);
    });
  });

  describe('the session cookie cannot be forged, altered or reused after it expires', () => {
    const reject = async (cookie: string) => {
      const res = await adminCall(stack, 'GET', '/admin', { cookie });
      expect(res.status).toBe(401);
    };

    it('a tampered payload (a viewer promoted to admin) or signature is refused', async () => {
      const [vPayload, vSignature] = victor.slice('cardpull_admin='.length).split('.') as [string, string];
      const claims = JSON.parse(Buffer.from(vPayload, 'base64url').toString());
      const promoted = Buffer.from(JSON.stringify({ ...claims, r: 'admin' })).toString('base64url');
      await reject(`cardpull_admin=${promoted}.${vSignature}`);
      await reject(`cardpull_admin=${vPayload}.${vSignature.slice(0, -2)}AA`);
      await reject(`cardpull_admin=${vPayload}`);
      await reject('cardpull_admin=garbage');
    });

    it('an expired session is refused', async () => {
      const sessions = new AdminSessions(stack.config);
      const user = stack.config.ADMIN_USERS.find((u) => u.name === 'alice')!;
      const { cookie } = sessions.issue(user, Date.now() - stack.config.ADMIN_SESSION_TTL_MS - 1000);
      await reject(`cardpull_admin=${cookie}`);
      const fresh = sessions.issue(user).cookie; // the same signer, now: accepted (the test forges correctly)
      expect((await adminCall(stack, 'GET', '/admin', { cookie: `cardpull_admin=${fresh}` })).status).toBe(200);
    });

    it('a cookie signed with another secret, or for a user whose entry changed, is refused', async () => {
      const other = new AdminSessions(loadServiceConfig({ CARDPULL_PROFILE: 'local', ...stack.env, ADMIN_SESSION_SECRET: 'another-secret-of-some-length' }));
      await reject(`cardpull_admin=${other.issue(stack.config.ADMIN_USERS[0]!).cookie}`);
      const sameSecret = new AdminSessions(stack.config);
      await reject(`cardpull_admin=${sameSecret.issue({ name: 'alice', secret: 'an-old-password', role: 'admin' }).cookie}`);
      await reject(`cardpull_admin=${sameSecret.issue({ name: 'ghost', secret: 'whatever', role: 'admin' }).cookie}`);
    });
  });

  describe('state-changing forms need the CSRF token of the session', () => {
    const redrive = (cookie: string, form: Record<string, string>) => adminCall(stack, 'POST', `/admin/orders/${SOME_ORDER}/redrive`, { cookie, form });

    it('without it, with a wrong one, or with another session’s: 403', async () => {
      const victorToken = csrfOf((await adminCall(stack, 'GET', '/admin', { cookie: victor })).text);
      for (const form of [{ reason: 'x' }, { csrf: 'forged', reason: 'x' }, { csrf: victorToken, reason: 'x' }] as Record<string, string>[]) {
        const res = await redrive(alice, form);
        expect(res.status).toBe(403);
        expect(res.json.errors[0].code).toBe('csrf_token_invalid');
      }
      expect((await adminCall(stack, 'POST', '/admin/logout', { cookie: alice, form: {} })).status).toBe(403);
    });

    it('with it: the action runs (here: no such order, said in a flash message on the page)', async () => {
      const csrf = csrfOf((await adminCall(stack, 'GET', '/admin', { cookie: alice })).text);
      const res = await redrive(alice, { csrf, reason: 'x', back: '/admin' });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/admin');
      const flash = ([] as string[]).concat(res.headers['set-cookie'] as string).find((c) => c.startsWith('cardpull_flash='))!.split(';')[0]!;
      const page = await adminCall(stack, 'GET', '/admin', { cookie: `${alice}; ${flash}` });
      expect(page.text).toContain(`No order ${SOME_ORDER}`);
    });
  });

  describe('viewers look but do not act', () => {
    it('no action forms on their pages, and 403 when they post one anyway (with a valid token)', async () => {
      const page = await adminCall(stack, 'GET', '/admin', { cookie: victor });
      expect(page.text).toContain('victor (read-only)');
      expect(page.text).not.toMatch(/redrive|mark-failed/);
      const res = await adminCall(stack, 'POST', `/admin/orders/${SOME_ORDER}/mark-failed`, { cookie: victor, form: { csrf: csrfOf(page.text), reason: 'x' } });
      expect(res.status).toBe(403);
      expect(res.json.errors[0].code).toBe('read_only');
    });

    it('the job dashboard is read-only for them, and refuses their actions', async () => {
      const queues = async (cookie: string) => (await adminCall(stack, 'GET', '/admin/queues/api/queues', { cookie })).json.queues;
      const forAlice = await queues(alice);
      expect(forAlice.map((q: any) => q.name).sort()).toEqual(['callbacks', 'orders']);
      expect(forAlice.every((q: any) => q.readOnlyMode === false)).toBe(true);
      expect((await queues(victor)).every((q: any) => q.readOnlyMode === true)).toBe(true);
      const pause = await adminCall(stack, 'PUT', '/admin/queues/api/queues/callbacks/pause', { cookie: victor });
      expect(pause.status).toBe(403);
      expect(pause.json.errors[0].code).toBe('read_only');
    });

    it('dashboard actions from another site are refused even for an admin', async () => {
      const res = await adminCall(stack, 'PUT', '/admin/queues/api/queues/callbacks/pause', { cookie: alice, headers: { 'sec-fetch-site': 'cross-site' } });
      expect(res.status).toBe(403);
    });
  });

  it('every value is escaped on the pages (here: markup in an order\'s metadata and search query)', async () => {
    const markup = '<img src=x onerror=alert(1)>';
    const created = await stack.call('POST', '/v1/orders', { body: { gift_card_code: 'FAST-FREE', amount: 100, metadata: { note: markup } }, headers: { 'idempotency-key': idemKey() } });
    expect(created.status).toBe(202);
    const page = await adminCall(stack, 'GET', `/admin/orders/${created.body.order.id}`, { cookie: alice });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(markup);
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const search = await adminCall(stack, 'GET', `/admin/search?q=${encodeURIComponent(markup)}`, { cookie: alice });
    expect(search.text).not.toContain(markup);
    expect(search.text).toContain('&lt;img');
  });

  it('the order page lists the timeline in the order it happened (event ids compared as numbers)', async () => {
    const { Client } = await import('pg');
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      await pg.query("SELECT setval('order_events_id_seq', 998)"); // "created" is event 999, the next one 1000
      const created = await stack.call('POST', '/v1/orders', { body: { gift_card_code: 'FAST-FREE', amount: 200 }, headers: { 'idempotency-key': idemKey() } });
      await pg.query("INSERT INTO order_events (order_id, type, actor) VALUES ($1, 'later_event', 'sweeper')", [created.body.order.id]);
      const page = await adminCall(stack, 'GET', `/admin/orders/${created.body.order.id}`, { cookie: alice });
      expect(page.text.indexOf('later_event')).toBeGreaterThan(page.text.indexOf('api:shop'));
    } finally {
      await pg.end();
    }
  });

  describe('/v1 is unchanged by the operations surface', () => {
    it('POST /v1/orders with a form body is still 415 unsupported_media_type', async () => {
      const res = await stack.call('POST', '/v1/orders', {
        body: 'gift_card_code=FAST-FREE&amount=100',
        headers: { 'idempotency-key': idemKey(), 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ errors: [{ code: 'unsupported_media_type', message: 'Content-Type must be application/json' }], status: 'unsupported_media_type' });
    });

    it('the admin cookie is never sent to /v1 (Path=/admin), and /v1 ignores it anyway', async () => {
      const res = await stack.call('GET', '/v1/orders', { key: null, headers: { cookie: alice } });
      expect(res.status).toBe(401);
    });
  });

  it('logging out ends the session in the browser', async () => {
    const cookie = await login(stack, ALICE);
    const csrf = csrfOf((await adminCall(stack, 'GET', '/admin', { cookie })).text);
    const res = await adminCall(stack, 'POST', '/admin/logout', { cookie, form: { csrf } });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/login');
    expect(sessionSetCookie(res)).toMatch(/^cardpull_admin=; .*Max-Age=0/);
  });
});
