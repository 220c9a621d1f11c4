import { ProfileUnreadable, parsePartnerProfile, profileContradictions, readPartnerProfile, type PartnerProfile } from './profile';

const profile: PartnerProfile = {
  version: 1,
  probed_at: '2026-11-28T10:00:00.000Z',
  partner: { env: 'staging', base_url: 'https://partner-staging.example.com' },
  findings: [
    { point: 'signature_form', title: 'Signature form', verdict: 'differs', finding: 'only formula', evidence: [], setting: { name: 'PARTNER_SIGNATURE_FORM', value: 'formula' } },
    { point: 'balance_unit', title: 'Balance unit', verdict: 'as_assumed', finding: 'currency units', evidence: [], setting: { name: 'PARTNER_BALANCE_UNIT', value: 'major' } },
    { point: 'discount_unit', title: 'Discount unit', verdict: 'could_not_tell', finding: 'no card', evidence: [], setting: { name: 'PARTNER_DISCOUNT_UNIT', value: 'fraction' } },
  ],
};
const settings = { PARTNER_SIGNATURE_FORM: 'example', PARTNER_DISCOUNT_UNIT: 'percent', PARTNER_BALANCE_UNIT: 'major' } as const;

describe('the partner profile', () => {
  it('a setting contradicts a finding only when the finding told something: "could not tell" decides nothing', () => {
    expect(profileContradictions(profile, settings)).toEqual([
      { setting: 'PARTNER_SIGNATURE_FORM', configured: 'example', implied: 'formula', point: 'signature_form', finding: 'only formula' },
    ]);
    expect(profileContradictions(profile, { ...settings, PARTNER_SIGNATURE_FORM: 'formula' })).toEqual([]);
  });

  it('a file that is not a profile is an error naming what is wrong; no file is no profile', () => {
    expect(() => parsePartnerProfile('{', 'p.json')).toThrow(ProfileUnreadable);
    expect(() => parsePartnerProfile(JSON.stringify({ ...profile, findings: [{ point: 'x' }] }), 'p.json')).toThrow(/p\.json is not a partner profile: findings\.0\.title/);
    expect(() => parsePartnerProfile(JSON.stringify({ ...profile, findings: [{ ...profile.findings[0], setting: { name: 'DATABASE_URL', value: 'x' } }] }), 'p.json')).toThrow(/findings\.0\.setting\.name/);
    expect(readPartnerProfile('/nonexistent/partner-profile.json')).toBeNull();
    expect(parsePartnerProfile(JSON.stringify(profile))).toMatchObject({ partner: profile.partner });
  });
});
