import { ConfigError, hashAdminPassword, loadServiceConfig, verifyAdminPassword } from './index';

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
    expect(settingsRefused({ PARTNER_BASE_URL: 'https://live.partner.example.com', PARTNER_PRODUCTION_BASE_URL: 'https://live.partner.example.com' })).toEqual(['PARTNER_BASE_URL']);
  });

  it('staging defaults to the staging URL (the local simulator)', () => {
    expect(loadServiceConfig({}).PARTNER_BASE_URL).toBe('http://127.0.0.1:4010');
    expect(loadServiceConfig({ PARTNER_STAGING_BASE_URL: 'https://stg.example.com' }).PARTNER_BASE_URL).toBe('https://stg.example.com');
  });
});

describe('admin users are separate from API keys; passwords may be stored as scrypt hashes', () => {
  it('parses users, roles and hashes; verifies passwords in constant time', () => {
    const hash = hashAdminPassword('correct horse');
    const users = loadServiceConfig({ ADMIN_USERS: `ops:${hash},audit:audit-pass:viewer,admin:admin` }).ADMIN_USERS;
    expect(users.map((u) => [u.name, u.role])).toEqual([['ops', 'admin'], ['audit', 'viewer'], ['admin', 'admin']]);
    expect(verifyAdminPassword(users[0]!, 'correct horse')).toBe(true);
    expect(verifyAdminPassword(users[0]!, 'wrong')).toBe(false);
    expect(verifyAdminPassword(users[1]!, 'audit-pass')).toBe(true);
  });

  it.each(['nopassword', 'a:b', 'x:scrypt$only-one-part', 'a:pass1,a:pass2'])('refuses %p', (value) => {
    expect(settingsRefused({ ADMIN_USERS: value })).toEqual(['ADMIN_USERS']);
  });
});

describe('callbacks: a client with a default URL needs a secret to sign them', () => {
  it('parses URLs and secrets', () => {
    const c = loadServiceConfig({ CALLBACK_URLS: 'shop=https://shop.example.com/hooks/cardpull', CALLBACK_SECRETS: 'shop:0123456789abcdef' });
    expect(c.CALLBACK_URLS.get('shop')).toBe('https://shop.example.com/hooks/cardpull');
    expect(c.CALLBACK_SECRETS.get('shop')).toBe('0123456789abcdef');
  });
  it.each([
    [{ CALLBACK_URLS: 'shop=https://shop.example.com/h' }, 'CALLBACK_SECRETS'],
    [{ CALLBACK_URLS: 'shop=ftp://x' }, 'CALLBACK_URLS'],
    [{ CALLBACK_SECRETS: 'shop:short' }, 'CALLBACK_SECRETS'],
  ])('refuses %p', (env, setting) => {
    expect(settingsRefused(env)).toContain(setting);
  });
});
