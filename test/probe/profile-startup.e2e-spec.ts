import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPartnerProfile, type PartnerProfile } from '@cardpull/partner-client';
import { spawnWorker } from '../support/processes';

/**
 * Issue 25: the worker reads the partner profile (PARTNER_PROFILE) at start and refuses to start when a
 * setting contradicts it, naming both values; a profile of another environment is not checked.
 */
describe('the partner profile at the worker start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profile-'));
  const BASE = 'http://127.0.0.1:4010';
  const profile = (baseUrl = BASE): PartnerProfile => ({
    version: 1,
    probed_at: '2026-11-28T10:00:00.000Z',
    partner: { env: 'staging', base_url: baseUrl },
    findings: [
      { point: 'signature_form', title: 'Signature form', verdict: 'differs', finding: 'only the formula form is accepted', evidence: [], setting: { name: 'PARTNER_SIGNATURE_FORM', value: 'formula' } },
      { point: 'balance_unit', title: 'Unit of balance.amount', verdict: 'as_assumed', finding: 'currency units', evidence: [], setting: { name: 'PARTNER_BALANCE_UNIT', value: 'major' } },
    ],
  });
  const write = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  // The check runs before any connection: a database or Redis that is not there is never reached.
  const env = (path: string, more: Record<string, string> = {}) => ({ CARDPULL_PROFILE: 'local', PARTNER_BASE_URL: BASE, PARTNER_PROFILE: path, DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none', ...more });

  it('a setting the profile contradicts: the worker exits 1 at start, naming the setting, its value and the implied one', async () => {
    const worker = spawnWorker(env(write('contradicted.json', profile())));
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    expect(worker.logs.join('\n')).toMatch(
      /cannot start: the partner profile .*contradicted\.json \(probed 2026-11-28T10:00:00\.000Z against http:\/\/127\.0\.0\.1:4010\) contradicts a setting:\n {2}PARTNER_SIGNATURE_FORM=example but the partner's answers imply PARTNER_SIGNATURE_FORM=formula/,
    );
  });

  it('a file that is not a profile stops the worker too: a committed profile must say something', async () => {
    const worker = spawnWorker(env(write('broken.json', '{"version": 1, "findings": 3}')));
    expect(await worker.exited).toEqual({ code: 1, signal: null });
    expect(worker.logs.join('\n')).toMatch(/cannot start: .*broken\.json is not a partner profile/);
  });

  it('the settings the profile implies pass the check; a profile of another environment is not checked; no file, nothing to check', () => {
    const settings = { PARTNER_BASE_URL: BASE, PARTNER_SIGNATURE_FORM: 'formula', PARTNER_DISCOUNT_UNIT: 'percent', PARTNER_BALANCE_UNIT: 'major' } as const;
    expect(checkPartnerProfile({ ...settings, PARTNER_PROFILE: write('ok.json', profile()) }).kind).toBe('consistent');
    expect(checkPartnerProfile({ ...settings, PARTNER_SIGNATURE_FORM: 'example', PARTNER_PROFILE: write('other.json', profile('https://partner-staging.example.com')) }).kind).toBe('other_environment');
    expect(checkPartnerProfile({ ...settings, PARTNER_PROFILE: join(dir, 'missing.json') })).toEqual({ kind: 'none', path: join(dir, 'missing.json') });
  });
});
