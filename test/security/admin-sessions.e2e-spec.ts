import { AdminSessions } from '../../apps/api/src/admin/auth/admin-sessions.service';
import { startStack, type Stack } from '../support/stack';
import { ADMIN_ENV, ALICE, adminCall, csrfOf, login, sessionSetCookie } from '../admin/support/admin';

const IDLE_MS = 120_000;

/**
 * Operators' sessions (issue 11, opening 7): a session idle for ADMIN_SESSION_IDLE_MS ends and each page
 * renews it; behind a TLS-terminating proxy listed in TRUSTED_PROXIES the session cookie is Secure (the
 * proxy's X-Forwarded-Proto is believed), and from anyone else that header is ignored; a logout ends the
 * session on the server, so a copy of its cookie taken before is refused, by every API process.
 */
describe('security: admin sessions end when idle, and their cookie is Secure behind a trusted TLS proxy', () => {
  let trusted: Stack;
  let untrusted: Stack;
  beforeAll(async () => {
    [trusted, untrusted] = await Promise.all([
      startStack({ worker: false, env: { ...ADMIN_ENV, ADMIN_SESSION_IDLE_MS: String(IDLE_MS), TRUSTED_PROXIES: '127.0.0.1' } }),
      startStack({ worker: false, env: ADMIN_ENV }),
    ]);
  });
  afterAll(async () => {
    await trusted?.close();
    await untrusted?.close();
  });

  it('a session idle for longer than ADMIN_SESSION_IDLE_MS is refused; an active one is renewed', async () => {
    const sessions = trusted.api!.get(AdminSessions);
    const alice = trusted.config.ADMIN_USERS.find((u) => u.name === ALICE.user)!;
    const idle = sessions.issue(alice, Date.now() - IDLE_MS - 1_000).cookie;
    expect((await adminCall(trusted, 'GET', '/admin', { cookie: `cardpull_admin=${idle}` })).status).toBe(401);
    const active = sessions.issue(alice, Date.now() - IDLE_MS + 20_000).cookie;
    const page = await adminCall(trusted, 'GET', '/admin', { cookie: `cardpull_admin=${active}` });
    expect(page.status).toBe(200);
    const renewed = sessionSetCookie(page)?.split(';')[0];
    expect(renewed).toMatch(/^cardpull_admin=/);
    expect(renewed).not.toBe(`cardpull_admin=${active}`);
    expect((await adminCall(trusted, 'GET', '/admin', { cookie: renewed })).status).toBe(200);
  });

  it('login through a trusted TLS proxy (X-Forwarded-Proto: https) sets a Secure cookie; the same header from an untrusted peer is ignored', async () => {
    const viaProxy = { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.7' };
    const secure = await adminCall(trusted, 'POST', '/admin/login', { form: { user: ALICE.user, password: ALICE.password }, headers: viaProxy });
    expect(secure.status).toBe(303);
    expect(sessionSetCookie(secure)).toMatch(/; Secure$/);
    const plain = await adminCall(untrusted, 'POST', '/admin/login', { form: { user: ALICE.user, password: ALICE.password }, headers: viaProxy });
    expect(plain.status).toBe(303);
    expect(sessionSetCookie(plain)).not.toContain('Secure');
  });

  it('after a logout, a copy of the session cookie is refused (also by another API process of the same database)', async () => {
    const cookie = await login(trusted, ALICE);
    const page = await adminCall(trusted, 'GET', '/admin', { cookie });
    expect(page.status).toBe(200);
    const other = await startStack({ worker: false, db: trusted.db, sim: trusted.sim, env: { ...ADMIN_ENV, TRUSTED_PROXIES: '127.0.0.1' } });
    try {
      expect((await adminCall(other, 'GET', '/admin', { cookie })).status).toBe(200);
      const out = await adminCall(trusted, 'POST', '/admin/logout', { cookie, form: { csrf: csrfOf(page.text) } });
      expect(out.status).toBe(303);
      expect((await adminCall(trusted, 'GET', '/admin', { cookie })).status).toBe(401);
      expect((await adminCall(other, 'GET', '/admin', { cookie })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});
