import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { hashAdminPassword } from '@cardpull/config';
import { parsePartnerProfile, type PartnerProfile, type ProfileFinding } from '@cardpull/partner-client';
import { testPool, waitFor } from '@cardpull/testing';
import { runProbe, type ProbeOptions } from '../../apps/worker/src/probe/probe';
import { OrderBuyer, PROBE_CLIENT } from '../../apps/worker/src/probe/probe-buyer';
import { probeCommand } from '../../apps/worker/src/probe/probe-command';
import { probeReport } from '../../apps/worker/src/probe/probe-report';
import { useStack } from '../support/stack';

/**
 * Issue 25, part 1: `npm run probe` against the simulator in each reading it can play. Each reading is
 * detected and named with the setting it implies; nothing is bought beyond one card of the smallest face
 * value (none at all with --no-buy, none beyond the production cap), and that card is an order the worker
 * finishes and stores like any other; production is refused without the flag naming the money.
 */
describe('npm run probe: the partner learned point by point', () => {
  // The sync pull takes 800 ms, so the probe's repeat (200 ms after the first send) finds it running.
  const stack = useStack({ simEnv: { SIM_SYNC_DELAY_MS: '800' }, beforeClose: () => pool.end() });
  let pool: Pool;
  beforeAll(() => {
    pool = testPool(stack.db.url, 4);
  });
  beforeEach(() => stack.sim.control.reset());
  // The probe's card is an order the worker finishes: each test waits for it, so that the next test's reset
  // partner never sees this one's request ID.
  afterEach(() =>
    waitFor('every probe order settled by the worker', async () => {
      const { rows } = await pool.query(`SELECT count(*)::int AS open FROM orders WHERE client = $1 AND status NOT IN ('completed', 'failed', 'needs_attention')`, [PROBE_CLIENT]);
      return rows[0].open === 0;
    }, 20_000),
  );

  const probe = (o: Partial<ProbeOptions> = {}): Promise<PartnerProfile> =>
    runProbe({
      credentials: { baseUrl: stack.config.PARTNER_BASE_URL, apiKey: stack.config.PARTNER_API_KEY, identifier: stack.config.PARTNER_IDENTIFIER, sharedKeyHex: stack.config.PARTNER_SHARED_KEY },
      env: 'staging',
      configured: stack.config,
      timeoutMs: 5_000,
      maxCalls: 120,
      burst: 30,
      buyer: null,
      repeatAfterMs: 200,
      ...o,
    });
  const buyer = () => new OrderBuyer(pool, stack.config.PARTNER_DISCOUNT_UNIT);
  const point = (profile: PartnerProfile, name: string): ProfileFinding => {
    const found = profile.findings.find((f) => f.point === name);
    if (!found) throw new Error(`no finding ${name} in ${profile.findings.map((f) => f.point).join(', ')}`);
    return found;
  };
  const cardsIssued = async () => (await stack.sim.control.ledger()).cards;

  it('the default reading: every point it can tell is "as we assume", one card is bought, and the worker stores it on its order', async () => {
    const profile = await probe({ buyer: buyer() });
    const told = profile.findings.filter((f) => f.verdict !== 'could_not_tell');
    expect(profile.findings.filter((f) => f.verdict === 'differs')).toEqual([]);
    expect(told.map((f) => f.point).sort()).toEqual(
      ['balance_unit', 'card_amount', 'catalog', 'check_order', 'clock_window', 'come_back_later', 'date_header', 'discount_unit', 'error_envelope', 'pull_request_not_found', 'repeat_after_end', 'signature_form', 'stale_timestamp_code'].sort(),
    );
    expect(point(profile, 'come_back_later').finding).toMatch(/^409 pull_in_progress with Retry-After 10: cardpull reads it as an unknown outcome \(in_progress\)/);
    expect(point(profile, 'rate_limit')).toMatchObject({ verdict: 'could_not_tell', finding: expect.stringMatching(/^no limit met: 30 reads/) });
    expect(probeReport(profile)).toMatch(/Every point the probe could tell is as we assume/);

    // One card, of the smallest face value of a discounted gift card, under the order's own request ID.
    const cards = await cardsIssued();
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({ request_id: profile.spent!.request_id, amount: profile.spent!.face_value, gift_card_code: 'NOVA-GAMES-FREE' });
    expect(profile.calls).toBeLessThanOrEqual(120);
    const stored = await waitFor('the probe order completed by the worker', async () => {
      const { rows } = await pool.query(`SELECT o.status, o.client, c.partner_card_id FROM orders o LEFT JOIN cards c ON c.order_id = o.id WHERE o.id = $1`, [profile.spent!.order_id]);
      return rows[0]?.status === 'completed' ? rows[0] : null;
    });
    expect(stored).toEqual({ status: 'completed', client: PROBE_CLIENT, partner_card_id: cards[0]!.id });
    expect(await cardsIssued()).toHaveLength(1);
  });

  it('a partner that accepts only the formula form: "differs: set PARTNER_SIGNATURE_FORM=formula"', async () => {
    await stack.sim.control.setReadings({ signature_forms: 'formula' });
    const profile = await probe();
    expect(point(profile, 'signature_form')).toMatchObject({ verdict: 'differs', setting: { name: 'PARTNER_SIGNATURE_FORM', value: 'formula' }, finding: expect.stringMatching(/only the formula form is accepted \(the example form: 401 invalid_signature\)/) });
    // The rest was probed in the form that works.
    expect(point(profile, 'error_envelope').verdict).toBe('as_assumed');
  });

  it('discounts as fractions and the balance in minor units: both named, from the one card the balance paid for', async () => {
    await stack.sim.control.setReadings({ discount_unit: 'fraction', balance_unit: 'minor' });
    const profile = await probe({ buyer: buyer() });
    expect(point(profile, 'balance_unit')).toMatchObject({ verdict: 'differs', setting: { name: 'PARTNER_BALANCE_UNIT', value: 'minor' } });
    expect(point(profile, 'discount_unit')).toMatchObject({ verdict: 'differs', setting: { name: 'PARTNER_DISCOUNT_UNIT', value: 'fraction' } });
    expect(probeReport(profile)).toMatch(/differs: set PARTNER_BALANCE_UNIT=minor; differs: set PARTNER_DISCOUNT_UNIT=fraction/);
    expect(await cardsIssued()).toHaveLength(1);
  });

  it('the other shapes the spec leaves open are told, and read safely: the 404 code, the order of the checks, "come back later" as a 202', async () => {
    await stack.sim.control.setReadings({ pull_request_not_found_code: 'card_not_found' });
    await stack.sim.control.addFault({ endpoint: 'any', mode: 'business_first' });
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'accepted_202' });
    const profile = await probe({ buyer: buyer() });
    expect(point(profile, 'pull_request_not_found')).toMatchObject({ verdict: 'as_assumed', finding: expect.stringMatching(/^404 card_not_found: read as not found/) });
    expect(point(profile, 'check_order')).toMatchObject({ verdict: 'as_assumed', finding: expect.stringMatching(/^checks the body first/) });
    expect(point(profile, 'come_back_later')).toMatchObject({ verdict: 'as_assumed', finding: expect.stringMatching(/^202 with Retry-After 10: cardpull reads it as an unknown outcome \(in_progress\)/) });
    expect(await cardsIssued()).toHaveLength(1);
  });

  it("the partner's clock: its offset, a window too narrow to sign safely, a stale Timestamp answered invalid_signature", async () => {
    await stack.sim.control.setClock({ offset_s: 120, window_s: 3, stale_timestamp_code: 'invalid_signature' });
    const profile = await probe();
    expect(point(profile, 'signature_form').verdict).toBe('as_assumed');
    expect(point(profile, 'date_header').finding).toMatch(/the partner's clock is 1(19|20|21)(\.\d)? s ahead of ours/);
    expect(point(profile, 'clock_window')).toMatchObject({ verdict: 'differs', finding: expect.stringMatching(/accepted 0 s ahead, refused 5 s/) });
    expect(point(profile, 'stale_timestamp_code')).toMatchObject({ verdict: 'as_assumed', finding: expect.stringMatching(/^401 invalid_signature/) });
  });

  it('rate limits met in the burst are reported with their Retry-After; the burst stays under its cap', async () => {
    await stack.sim.control.setLimits({ read: { per_second: 10, retry_after_s: 2 } });
    const profile = await probe({ burst: 40 });
    expect(point(profile, 'rate_limit')).toMatchObject({ verdict: 'as_assumed', finding: expect.stringMatching(/reads refused 429 rate_limited, Retry-After: 2/) });
    const burst = (await stack.sim.control.ledger()).requests.filter((r) => r.path === '/partners/v1/balance');
    expect(burst.length).toBeLessThanOrEqual(40 + 20);
  });

  it('production: nothing bought above the cap the flag names, and at most one card of the smallest face value under it', async () => {
    expect(point(await probe({ env: 'production', spendCapMinor: 99, buyer: buyer(), burst: 0 }), 'card_amount')).toMatchObject({ verdict: 'could_not_tell', finding: 'no gift card in stock costs at most 99 (--production-spend)' });
    expect(await cardsIssued()).toEqual([]);
    const profile = await probe({ env: 'production', spendCapMinor: 100, buyer: buyer(), burst: 0 });
    expect(profile.spent).toMatchObject({ cards: 1, face_value: 100 });
    expect((await cardsIssued()).map((c) => [c.gift_card_code, c.amount])).toEqual([['FAST-FREE', 100]]);
  });

  it('npm run probe refuses production without --production-spend, before any call, and writes no profile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probe-'));
    const out = join(dir, 'profile.json');
    const err: string[] = [];
    const before = (await stack.sim.control.ledger()).requests.length;
    const env = {
      PARTNER_ENV: 'production',
      PARTNER_BASE_URL: 'https://partner.example.com',
      PARTNER_API_KEY: 'live-api-key',
      PARTNER_IDENTIFIER: 'live-identifier',
      PARTNER_SHARED_KEY: 'ab'.repeat(32),
      CARD_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
      API_KEYS: 'checkout:checkout-key-123',
      ADMIN_USERS: `ops:${hashAdminPassword('s3cret-pass')}`,
      ADMIN_SESSION_SECRET: 'x'.repeat(32),
      DATABASE_URL: stack.db.url,
    };
    const code = await probeCommand(['--out', out], env, { out: () => undefined, err: (t) => err.push(t) });
    expect(code).toBe(1);
    expect(err.join('')).toMatch(/refusing to probe production \(https:\/\/partner\.example\.com\) without --production-spend.*Nothing was sent/);
    expect(existsSync(out)).toBe(false);
    expect((await stack.sim.control.ledger()).requests.length).toBe(before);
  });

  it('npm run probe writes the profile the worker reads, and exits 2 when a point contradicts the settings', async () => {
    await stack.sim.control.setReadings({ signature_forms: 'formula' });
    const out = join(mkdtempSync(join(tmpdir(), 'probe-')), 'profile.json');
    const printed: string[] = [];
    const code = await probeCommand(['--out', out, '--no-buy', '--burst', '5'], stack.env, { out: (t) => printed.push(t), err: (t) => printed.push(t) });
    expect(code).toBe(2);
    const profile = parsePartnerProfile(readFileSync(out, 'utf8'));
    expect(profile.partner.base_url).toBe(stack.config.PARTNER_BASE_URL);
    expect(printed.join('')).toMatch(/Signature form \(with or without the identifier\) +differs: set PARTNER_SIGNATURE_FORM=formula/);
    writeFileSync(out, JSON.stringify(profile));
  });
});
