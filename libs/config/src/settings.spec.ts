import { ConfigError, loadServiceConfig, loadSimConfig } from './index';

const problemsOf = (env: Record<string, string>, load: (env: Record<string, string>) => unknown = (e) => loadServiceConfig({ CARDPULL_PROFILE: 'local', ...e })) => {
  try {
    load(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

describe('settings: every setting validated once at start-up', () => {
  it('local defaults: nothing set gives a working configuration', () => {
    const cfg = loadServiceConfig({ CARDPULL_PROFILE: 'local' });
    expect(cfg.PARTNER_BASE_URL).toBe('http://127.0.0.1:4010');
    expect(cfg.PARTNER_TIMEOUT_MS).toBe(10_000);
    expect(cfg.SYNC_RETRY_FIRST_DELAY_MS).toBe(60_000);
    expect(cfg.SYNC_RETRY_INTERVAL_MS).toBe(10_000);
    expect(cfg.ASYNC_POLL_FIRST_DELAY_MS).toBe(2_000);
    expect(cfg.ASYNC_POLL_INTERVAL_MIN_MS).toBe(5_000);
    expect(cfg.ASYNC_POLL_INTERVAL_MAX_MS).toBe(10_000);
    expect(cfg.PARTNER_SIGNATURE_FORM).toBe('example');
    expect(cfg.API_KEYS).toEqual([{ client: 'local', key: 'local-dev-key', scopes: new Set(['orders:write', 'orders:read', 'cards:read', 'metrics:read', 'statements:read', 'subscriptions:write']) }]);
    expect(cfg.CARD_ENCRYPTION_KEYS[0]!.key).toHaveLength(32);
    const sim = loadSimConfig({});
    expect(sim.SIM_SHARED_KEY).toBe(cfg.PARTNER_SHARED_KEY);
    expect(sim.SIM_CONTROL).toBe(false);
  });

  it('an empty value means "use the default"', () => {
    expect(loadServiceConfig({ CARDPULL_PROFILE: 'local', PORT: '' }).PORT).toBe(3000);
  });

  it.each([
    ['PORT', 'eighty', 'must be an integer'],
    ['PORT', '70000', 'must be at most 65535'],
    ['PARTNER_TIMEOUT_MS', '-5', 'must be at least 100'],
    ['DATABASE_URL', 'mysql://x', 'postgresql://'],
    ['REDIS_URL', 'not a url', 'redis://'],
    ['PARTNER_BASE_URL', 'ftp://partner', 'http://'],
    ['PARTNER_SHARED_KEY', 'xyz-not-hex', 'hexadecimal'],
    ['PARTNER_SHARED_KEY', 'abc', 'hexadecimal'],
    ['PARTNER_SIGNATURE_FORM', 'other', 'one of example, formula'],
    ['PARTNER_ENV', 'prod', 'one of staging, production'],
    ['API_KEYS', 'nocolon', 'client:key'],
    ['API_KEYS', 'a:short', 'at least 8'],
    ['API_KEYS', 'a:longenough1:orders:rite', 'unknown scope orders:rite'],
    ['API_KEYS', 'a:longenough1:orders:write+cards:lol', 'unknown scope cards:lol'],
    ['API_KEYS', 'a:longenough1,b:longenough1', 'used twice'],
    ['CARD_ENCRYPTION_KEYS', 'k1:c2hvcnQ=', '32 bytes'],
    ['CARD_ENCRYPTION_KEYS', 'nokey', 'kid:base64key'],
    ['LOG_LEVEL', 'loud', 'one of'],
  ])('a bad %s (%s) stops start-up with a message naming it', (setting, value, fragment) => {
    const problems = problemsOf({ [setting]: value });
    expect(problems).toEqual([expect.objectContaining({ setting, message: expect.stringContaining(fragment) })]);
  });

  it('scopes are parsed from client:key:scope+scope', () => {
    const clients = loadServiceConfig({ CARDPULL_PROFILE: 'local', API_KEYS: 'shop:shop-key-123:orders:write+orders:read, ops:ops-key-123' }).API_KEYS;
    expect(clients.map((c) => [c.client, c.key, [...c.scopes].sort()])).toEqual([
      ['shop', 'shop-key-123', ['orders:read', 'orders:write']],
      ['ops', 'ops-key-123', ['cards:read', 'metrics:read', 'orders:read', 'orders:write', 'statements:read', 'subscriptions:write']],
    ]);
  });

  it('CATALOG_DISCOUNT_CHANGE_THRESHOLD: unset, half a percentage point in the unit of PARTNER_DISCOUNT_UNIT; set, as given; beyond a whole discount, refused', () => {
    const local = (env: Record<string, string>) => loadServiceConfig({ CARDPULL_PROFILE: 'local', ...env }).CATALOG_DISCOUNT_CHANGE_THRESHOLD;
    expect(local({})).toBe(0.5);
    expect(local({ PARTNER_DISCOUNT_UNIT: 'fraction' })).toBe(0.005);
    expect(local({ CATALOG_DISCOUNT_CHANGE_THRESHOLD: '0' })).toBe(0);
    expect(local({ CATALOG_DISCOUNT_CHANGE_THRESHOLD: '1.25' })).toBe(1.25);
    expect(problemsOf({ CATALOG_DISCOUNT_CHANGE_THRESHOLD: '2', PARTNER_DISCOUNT_UNIT: 'fraction' })).toEqual([expect.objectContaining({ setting: 'CATALOG_DISCOUNT_CHANGE_THRESHOLD' })]);
    expect(problemsOf({ CATALOG_DISCOUNT_CHANGE_THRESHOLD: '-1' })).toEqual([expect.objectContaining({ setting: 'CATALOG_DISCOUNT_CHANGE_THRESHOLD' })]);
  });

  it('poll interval bounds must be ordered', () => {
    const problems = problemsOf({ ASYNC_POLL_INTERVAL_MIN_MS: '9000', ASYNC_POLL_INTERVAL_MAX_MS: '1000' });
    expect(problems[0]!.setting).toBe('ASYNC_POLL_INTERVAL_MIN_MS');
  });

  it('several bad settings are all named in one message', () => {
    try {
      loadServiceConfig({ CARDPULL_PROFILE: 'local', PORT: 'x', SWEEP_INTERVAL_MS: 'y' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect((error as Error).message).toMatch(/PORT: must be an integer/);
      expect((error as Error).message).toMatch(/SWEEP_INTERVAL_MS: must be an integer/);
    }
  });

  it('a bad simulator setting names it too', () => {
    expect(problemsOf({ SIM_MODE: 'dev' }, loadSimConfig)[0]!.setting).toBe('SIM_MODE');
    expect(problemsOf({ SIM_CONTROL: 'maybe' }, loadSimConfig)[0]!.setting).toBe('SIM_CONTROL');
    expect(problemsOf({ SIM_INITIAL_BALANCE: '-1' }, loadSimConfig)[0]!.setting).toBe('SIM_INITIAL_BALANCE');
  });
});
