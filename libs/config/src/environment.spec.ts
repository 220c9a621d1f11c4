import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, LOCAL_CALLBACKS, hashAdminPassword, loadServiceConfig, verifyAdminPassword } from './index';

const PROD = {
  PARTNER_ENV: 'production',
  PARTNER_BASE_URL: 'https://partner.example.com',
  PARTNER_API_KEY: 'live-api-key',
  PARTNER_IDENTIFIER: 'live-identifier',
  PARTNER_SHARED_KEY: 'ab'.repeat(32),
  CARD_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  API_KEYS: 'checkout:checkout-key-123',
  ADMIN_USERS: `ops:${hashAdminPassword('s3cret-pass')}`,
  ADMIN_SESSION_SECRET: 'x'.repeat(32),
};

/** A local run (npm start, the tests): the public development values fill what is unset. */
const LOCAL = { CARDPULL_PROFILE: 'local' };

const settingsRefused = (env: Record<string, string>) => {
  try {
    loadServiceConfig(env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.map((p) => p.setting);
  }
};

describe('PARTNER_ENV: the service refuses production with staging or simulator settings, and the reverse', () => {
  it('a clean production configuration starts', () => {
    expect(settingsRefused(PROD)).toEqual([]);
  });

  it.each([
    ['the simulator URL', { PARTNER_BASE_URL: 'http://127.0.0.1:4010' }, 'PARTNER_BASE_URL'],
    ['a staging-looking URL', { PARTNER_BASE_URL: 'https://api.staging.partner.example.com' }, 'PARTNER_BASE_URL'],
    ['the configured staging URL', { PARTNER_BASE_URL: 'https://stg.partner.example.com', PARTNER_STAGING_BASE_URL: 'https://stg.partner.example.com' }, 'PARTNER_BASE_URL'],
    ['another URL than the production one', { PARTNER_PRODUCTION_BASE_URL: 'https://live.partner.example.com' }, 'PARTNER_BASE_URL'],
    ['the simulator credentials', { PARTNER_API_KEY: 'sim-api-key' }, 'PARTNER_API_KEY'],
    ['the development vault key', { CARD_ENCRYPTION_KEYS: 'dev-1:ZGV2ZWxvcG1lbnQta2V5LW5vdC1mb3ItcHJvZHVjdGk=' }, 'CARD_ENCRYPTION_KEYS'],
    ['the local API key', { API_KEYS: 'local:local-dev-key' }, 'API_KEYS'],
    ['a plain admin password', { ADMIN_USERS: 'ops:plain-password' }, 'ADMIN_USERS'],
    ['no session secret', { ADMIN_SESSION_SECRET: '' }, 'ADMIN_SESSION_SECRET'],
  ])('production with %s is refused', (_why, change, setting) => {
    expect(settingsRefused({ ...PROD, ...change })).toContain(setting);
  });

  it('production without any base URL names PARTNER_BASE_URL', () => {
    expect(settingsRefused({ ...PROD, PARTNER_BASE_URL: '' })).toEqual(['PARTNER_BASE_URL']);
    expect(loadServiceConfig({ ...PROD, PARTNER_BASE_URL: '', PARTNER_PRODUCTION_BASE_URL: 'https://live.partner.example.com' }).PARTNER_BASE_URL).toBe(
      'https://live.partner.example.com',
    );
  });

  it('staging pointed at the production URL is refused', () => {
    const staging = { ...PROD, PARTNER_ENV: 'staging' };
    expect(settingsRefused({ ...staging, PARTNER_BASE_URL: 'https://live.partner.example.com', PARTNER_PRODUCTION_BASE_URL: 'https://live.partner.example.com' })).toEqual(['PARTNER_BASE_URL']);
  });

  it('staging defaults to the staging URL (the local simulator)', () => {
    expect(loadServiceConfig(LOCAL).PARTNER_BASE_URL).toBe('http://127.0.0.1:4010');
    const staging = { ...PROD, PARTNER_ENV: 'staging', PARTNER_BASE_URL: '' };
    expect(loadServiceConfig({ ...staging, PARTNER_STAGING_BASE_URL: 'https://stg.example.com' }).PARTNER_BASE_URL).toBe('https://stg.example.com');
  });
});

describe('fail closed: the public development values only in CARDPULL_PROFILE=local (docs/SECURITY.md)', () => {
  const STAGING = { ...PROD, PARTNER_ENV: 'staging', PARTNER_BASE_URL: 'https://stg.partner.example.com' };

  it('a deployment that sets nothing (and forgets PARTNER_ENV) does not start: every secret is named', () => {
    expect(settingsRefused({}).sort()).toEqual(['ADMIN_USERS', 'API_KEYS', 'CARD_ENCRYPTION_KEYS', 'PARTNER_API_KEY', 'PARTNER_IDENTIFIER', 'PARTNER_SHARED_KEY'].sort());
  });

  it('a staging deployment with real secrets and an https partner starts', () => {
    expect(settingsRefused(STAGING)).toEqual([]);
  });

  it.each([
    ['the simulator key', { PARTNER_API_KEY: 'sim-api-key' }, 'PARTNER_API_KEY'],
    ['the simulator identifier', { PARTNER_IDENTIFIER: 'sim-identifier' }, 'PARTNER_IDENTIFIER'],
    ['the simulator shared key', { PARTNER_SHARED_KEY: '6b1f0c3e5a7d9b2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d' }, 'PARTNER_SHARED_KEY'],
    ['the public vault key', { CARD_ENCRYPTION_KEYS: 'dev-1:ZGV2ZWxvcG1lbnQta2V5LW5vdC1mb3ItcHJvZHVjdGk=' }, 'CARD_ENCRYPTION_KEYS'],
    ['local-dev-key', { API_KEYS: 'local:local-dev-key' }, 'API_KEYS'],
    ['admin:admin', { ADMIN_USERS: 'admin:admin' }, 'ADMIN_USERS'],
    ['an http: partner URL', { PARTNER_BASE_URL: 'http://partner.example.com' }, 'PARTNER_BASE_URL'],
    ['callbacks to local addresses', { CALLBACK_ALLOW_LOCAL: 'true' }, 'CALLBACK_ALLOW_LOCAL'],
  ])('outside the local profile, %s is refused with a message naming the setting', (_what, change, setting) => {
    expect(settingsRefused({ ...STAGING, ...change })).toEqual([setting]);
  });

  it('the local profile fills the public values, and never runs against the production partner', () => {
    const local = loadServiceConfig(LOCAL);
    expect([local.PARTNER_API_KEY, local.API_KEYS[0]?.key, local.ADMIN_USERS[0]?.name]).toEqual(['sim-api-key', 'local-dev-key', 'admin']);
    expect(settingsRefused({ ...PROD, ...LOCAL })).toContain('CARDPULL_PROFILE');
  });
});

describe('the local profile runs only against a local partner (issue 21: docker compose pointed at a real partner)', () => {
  it.each([
    'http://127.0.0.1:4010',
    'http://localhost:4010',
    'http://[::1]:4010',
    'http://sim:4010',
    'http://partner-sim:4010',
    'http://172.18.0.3:4010',
    'http://10.1.2.3:4010',
    'http://host.docker.internal:4010',
  ])('%s (this machine, a private address or a docker-compose service name) is accepted', (url) => {
    expect(settingsRefused({ ...LOCAL, PARTNER_BASE_URL: url })).toEqual([]);
  });

  it("docker-compose.yml's own default partner address is accepted", () => {
    const compose = readFileSync(join(__dirname, '..', '..', '..', 'docker-compose.yml'), 'utf8');
    const url = /PARTNER_BASE_URL: \$\{PARTNER_BASE_URL:-([^}]+)\}/.exec(compose)?.[1];
    expect(url).toMatch(/^http:\/\//);
    expect(settingsRefused({ ...LOCAL, PARTNER_BASE_URL: url! })).toEqual([]);
  });

  it.each(['https://partner-staging.example.com', 'https://api.partner.com', 'http://8.8.8.8:4010', 'https://sim.example.com'])(
    '%s (a public address) is refused, with a message naming PARTNER_BASE_URL and what to set instead',
    (url) => {
      // As `docker compose up` runs with PARTNER_* pointed at a real partner and PARTNER_ENV left at staging.
      const env = { ...LOCAL, PARTNER_ENV: 'staging', PARTNER_BASE_URL: url, PARTNER_API_KEY: 'real-key', PARTNER_IDENTIFIER: 'real-id', PARTNER_SHARED_KEY: 'ab'.repeat(32) };
      expect(settingsRefused(env)).toEqual(['PARTNER_BASE_URL']);
      expect(() => loadServiceConfig(env)).toThrow(/PARTNER_BASE_URL.*not a local address.*CARDPULL_PROFILE=deployed/s);
    },
  );

  it('a real staging partner starts with the deployed profile and its own secrets', () => {
    expect(settingsRefused({ ...PROD, PARTNER_ENV: 'staging', PARTNER_BASE_URL: 'https://partner-staging.example.com' })).toEqual([]);
  });
});

describe('CARD_ENCRYPTION_KEYS_FILE: the vault keys from a file (a secret manager mount, KMS-unwrapped data keys)', () => {
  const file = (text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'keys-')), 'keys');
    writeFileSync(path, text);
    return path;
  };
  const { CARD_ENCRYPTION_KEYS: _inline, ...WITHOUT_KEYS } = PROD;

  it('reads one key per line (comments skipped); the first seals', () => {
    const k2 = Buffer.alloc(32, 9).toString('base64');
    const config = loadServiceConfig({ ...WITHOUT_KEYS, CARD_ENCRYPTION_KEYS_FILE: file(`# rotated 2026-11\nk2:${k2}\n${PROD.CARD_ENCRYPTION_KEYS}\n`) });
    expect(config.CARD_ENCRYPTION_KEYS.map((k) => k.id)).toEqual(['k2', 'k1']);
  });

  it('a missing file, or both settings at once, stops start-up naming CARD_ENCRYPTION_KEYS_FILE', () => {
    expect(settingsRefused({ ...WITHOUT_KEYS, CARD_ENCRYPTION_KEYS_FILE: '/nonexistent/keys' })).toEqual(['CARD_ENCRYPTION_KEYS_FILE']);
    expect(settingsRefused({ ...PROD, CARD_ENCRYPTION_KEYS_FILE: file(PROD.CARD_ENCRYPTION_KEYS) })).toEqual(['CARD_ENCRYPTION_KEYS_FILE']);
  });
});

describe('admin users are separate from API keys; passwords may be stored as scrypt hashes', () => {
  it('parses users, roles and hashes; verifies passwords in constant time', () => {
    const hash = hashAdminPassword('correct horse');
    const users = loadServiceConfig({ ...LOCAL, ADMIN_USERS: `ops:${hash},audit:audit-pass:viewer,admin:admin` }).ADMIN_USERS;
    expect(users.map((u) => [u.name, u.role])).toEqual([['ops', 'admin'], ['audit', 'viewer'], ['admin', 'admin']]);
    expect(verifyAdminPassword(users[0]!, 'correct horse')).toBe(true);
    expect(verifyAdminPassword(users[0]!, 'wrong')).toBe(false);
    expect(verifyAdminPassword(users[1]!, 'audit-pass')).toBe(true);
  });

  it.each(['nopassword', 'a:b', 'x:scrypt$only-one-part', 'a:pass1,a:pass2'])('refuses %p', (value) => {
    expect(settingsRefused({ ...LOCAL, ADMIN_USERS: value })).toEqual(['ADMIN_USERS']);
  });
});

describe('callbacks: a client with a default URL needs a secret to sign them', () => {
  it('parses URLs and secrets, both written client=value', () => {
    const c = loadServiceConfig({ ...LOCAL, CALLBACK_URLS: 'shop=https://shop.example.com/hooks/cardpull', CALLBACK_SECRETS: 'shop=0123456789abcdef,other=with:colon=and-equals' });
    expect(c.CALLBACK_URLS.get('shop')).toBe('https://shop.example.com/hooks/cardpull');
    expect(c.CALLBACK_SECRETS.get('shop')).toBe('0123456789abcdef');
    expect(c.CALLBACK_SECRETS.get('other')).toBe('with:colon=and-equals');
  });

  it('still reads the older client:secret form of CALLBACK_SECRETS (deprecated)', () => {
    const c = loadServiceConfig({ ...LOCAL, CALLBACK_SECRETS: 'shop:0123456789abcdef,other:with=equals-and:colon' });
    expect(c.CALLBACK_SECRETS.get('shop')).toBe('0123456789abcdef');
    expect(c.CALLBACK_SECRETS.get('other')).toBe('with=equals-and:colon');
  });
  it.each([
    [{ CALLBACK_URLS: 'shop=https://shop.example.com/h' }, 'CALLBACK_SECRETS'],
    [{ CALLBACK_URLS: 'shop=ftp://x' }, 'CALLBACK_URLS'],
    [{ CALLBACK_SECRETS: 'shop:short' }, 'CALLBACK_SECRETS'],
    [{ CALLBACK_SECRETS: 'shop=short' }, 'CALLBACK_SECRETS'],
    [{ CALLBACK_SECRETS: '=0123456789abcdef' }, 'CALLBACK_SECRETS'],
  ])('refuses %p', (env, setting) => {
    expect(settingsRefused({ ...LOCAL, ...env })).toContain(setting);
  });
});

describe('callbacks of the local development client under the local profile (issue 21: callbacks work under npm start)', () => {
  it("the local client's callbacks go to the simulator's receiver on the partner's address, signed with the public local secret", () => {
    const c = loadServiceConfig(LOCAL);
    expect(c.CALLBACK_ALLOW_LOCAL).toBe(true);
    expect(c.CALLBACK_URLS.get('local')).toBe('http://127.0.0.1:4010/_callbacks');
    expect(c.CALLBACK_SECRETS.get('local')).toBe(LOCAL_CALLBACKS.secret);
    // docker-compose: the simulator is the service `sim`.
    expect(loadServiceConfig({ ...LOCAL, PARTNER_BASE_URL: 'http://sim:4010' }).CALLBACK_URLS.get('local')).toBe('http://sim:4010/_callbacks');
  });

  it('what the settings say for the local client wins; other clients get nothing by default', () => {
    const c = loadServiceConfig({ ...LOCAL, CALLBACK_URLS: 'local=http://127.0.0.1:9999/mine,shop=http://127.0.0.1:9999/shop', CALLBACK_SECRETS: 'local=my-own-local-secret,shop=shop-secret-0000001' });
    expect([c.CALLBACK_URLS.get('local'), c.CALLBACK_SECRETS.get('local')]).toEqual(['http://127.0.0.1:9999/mine', 'my-own-local-secret']);
    const d = loadServiceConfig({ ...LOCAL, CALLBACK_SECRETS: 'shop=shop-secret-0000001' });
    expect([...d.CALLBACK_URLS.keys()]).toEqual(['local']);
    expect(d.CALLBACK_SECRETS.get('local')).toBe(LOCAL_CALLBACKS.secret);
  });

  it('with CALLBACK_ALLOW_LOCAL=false the receiver cannot be reached, so no URL is defaulted', () => {
    const c = loadServiceConfig({ ...LOCAL, CALLBACK_ALLOW_LOCAL: 'false' });
    expect(c.CALLBACK_URLS.size).toBe(0);
  });

  it('outside the local profile nothing is defaulted, and the public local secret is refused naming CALLBACK_SECRETS', () => {
    const c = loadServiceConfig(PROD);
    expect([c.CALLBACK_URLS.size, c.CALLBACK_SECRETS.size, c.CALLBACK_ALLOW_LOCAL]).toEqual([0, 0, false]);
    expect(settingsRefused({ ...PROD, CALLBACK_SECRETS: `checkout=${LOCAL_CALLBACKS.secret}` })).toEqual(['CALLBACK_SECRETS']);
  });
});
