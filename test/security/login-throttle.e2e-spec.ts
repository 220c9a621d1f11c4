import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { hashAdminPassword, loadServiceConfig } from '@cardpull/config';
import { FleetCounters, createHttpApp } from '@cardpull/platform';
import { AdminLogin } from '../../apps/api/src/admin/auth/admin-login.service';
import { ApiModule } from '../../apps/api/src/api.module';
import { setupApiDocs } from '../../apps/api/src/docs/openapi';
import { request } from 'undici';
import { startApiApp, startStack, useStack, type ApiApp, type Stack } from '../support/stack';
import { urlOf } from '../observability/support';

const ALICE = hashAdminPassword('alice-password');
const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

/**
 * Password checks never stall the service, and guessing is throttled (issue 11, opening 4):
 *  - scrypt runs off the event loop: while logins are being checked, the loop keeps turning (with the
 *    synchronous scrypt it did not turn once, and POST /v1/orders waited behind every login attempt);
 *  - /docs Basic auth is throttled like the login form: per name and address (10 failures), and per address
 *    whatever the names (50), without locking an operator out from everywhere.
 */
describe('security: password checks off the event loop, failed logins throttled (login form and /docs)', () => {
  it('checking passwords leaves the event loop free (ticks happen while 8 logins are checked)', async () => {
    const config = loadServiceConfig({ CARDPULL_PROFILE: 'local', ADMIN_USERS: `alice:${ALICE}`, LOG_LEVEL: 'silent' });
    const login = new AdminLogin(config, new FleetCounters(null, { prefix: 'unit', log: { warn: () => undefined } }));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => login.check(`10.0.0.${i}`, i % 2 ? 'alice' : 'nobody', 'wrong')));
      expect(results.map((r) => r.ok)).toEqual(Array(8).fill(false));
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });

  describe('/docs Basic auth over HTTP', () => {
    // The API as main.ts builds it (startStack's own API has no /docs).
    let stack: Stack;
    let api: NestFastifyApplication;
    beforeAll(async () => {
      stack = await startStack({ api: false, worker: false, env: { ADMIN_USERS: `alice:${ALICE},bob:bob-password` } });
      api = await createHttpApp(ApiModule.forConfig(stack.config, stack.logs));
      setupApiDocs(api);
      await api.listen({ port: 0, host: '127.0.0.1' });
      stack.apiUrl = urlOf(api);
    });
    afterAll(async () => {
      await api?.close();
      await stack?.close();
    });
    const docs = (user: string, password: string) => stack.call('GET', '/docs/json', { key: null, headers: basic(user, password) });

    it('10 wrong passwords for one name from one address, then 429 for that name; another operator still logs in from there', async () => {
      for (let i = 0; i < 10; i++) expect((await docs('alice', `guess-${i}`)).status).toBe(401);
      const throttled = await docs('alice', 'alice-password');
      expect([throttled.status, throttled.body.errors?.[0]?.code]).toEqual([429, 'too_many_attempts']);
      expect((await docs('bob', 'bob-password')).status).toBe(200);
    });

    it('a spray over many names from one address is refused after 50 failures, for every name', async () => {
      // 10 failures are counted already (the test above, same address).
      for (let i = 0; i < 40; i++) expect((await docs(`user${i}`, 'guess')).status).toBe(401);
      expect((await docs('bob', 'bob-password')).status).toBe(429);
    });
  });
});

describe('security: failed logins are counted across the fleet (issue 21)', () => {
  // Two API processes on one Redis: each would allow 10 failures per name if it counted on its own.
  let apps: ApiApp[] = [];
  const stack = useStack({ api: false, worker: false, env: { ADMIN_USERS: `alice:${ALICE},bob:bob-password` }, beforeClose: () => Promise.all(apps.map((a) => a.close())) });
  beforeAll(async () => {
    apps = [await startApiApp(stack), await startApiApp(stack)];
  });
  const docs = (app: ApiApp, user: string, password: string) => app.call('GET', '/docs/json', { key: null, headers: basic(user, password) });
  const form = (app: ApiApp, user: string, password: string) =>
    request(`${app.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ user, password }).toString() }).then(async (r) => {
      await r.body.dump();
      return r.statusCode;
    });

  it('5 wrong passwords for one name on one API and 5 on the other: the next try is refused with 429 on both, on /docs and on the login form', async () => {
    for (let i = 0; i < 5; i++) expect((await docs(apps[0]!, 'alice', `guess-a${i}`)).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await form(apps[1]!, 'alice', `guess-b${i}`))).toBe(401);
    expect((await docs(apps[0]!, 'alice', 'alice-password')).status).toBe(429);
    expect((await docs(apps[1]!, 'alice', 'alice-password')).status).toBe(429);
    expect(await form(apps[0]!, 'alice', 'alice-password')).toBe(429);
    // Keyed by name and address: another operator still logs in from there.
    expect((await docs(apps[1]!, 'bob', 'bob-password')).status).toBe(200);
  });
});
