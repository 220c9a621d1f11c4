import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_ENV, ALICE, adminCall, login } from '../admin/support/admin';
import { useStack } from '../support/stack';

/** Issue 25: the operations page shows the partner profile, its date and what it says of the settings. */
describe('the partner profile on the operations page', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'profile-page-')), 'partner-profile.json');
  const stack = useStack({ env: { ...ADMIN_ENV, PARTNER_PROFILE: path }, worker: false });
  const page = async () => (await adminCall(stack, 'GET', '/admin', { cookie: await login(stack, ALICE), html: true })).text;
  const profile = (signatureForm: string) => ({
    version: 1,
    probed_at: '2026-11-28T10:00:00.000Z',
    partner: { env: 'staging', base_url: stack.config.PARTNER_BASE_URL },
    findings: [
      { point: 'signature_form', title: 'Signature form', verdict: signatureForm === 'example' ? 'as_assumed' : 'differs', finding: `only the ${signatureForm} form is accepted`, evidence: [], setting: { name: 'PARTNER_SIGNATURE_FORM', value: signatureForm } },
      { point: 'rate_limit', title: 'Rate limits', verdict: 'could_not_tell', finding: 'no limit met', evidence: [] },
    ],
  });

  it('no profile yet: the page says how to make one', async () => {
    expect(await page()).toMatch(/<h2>Partner profile<\/h2><p class="muted small">None: no file at <span class="mono">[^<]*partner-profile\.json<\/span>\. Run <span class="mono">npm run probe<\/span>/);
  });

  it('a profile that agrees with the settings: its date, its verdicts counted, each point behind a fold', async () => {
    writeFileSync(path, JSON.stringify(profile('example')));
    const html = await page();
    expect(html).toMatch(/data-profile-date="2026-11-28T10:00:00.000Z">Probed .*2026-11-28.* against <span class="mono">http:\/\/127\.0\.0\.1:\d+<\/span>:\s+1 as we assume, <b>0 differ<\/b>, 1 could not tell\./s);
    expect(html).toContain('<tr data-verdict="could_not_tell"><td>Rate limits</td><td class="nowrap">could not tell</td><td class="small">no limit met</td></tr>');
    expect(html).not.toContain('data-profile-contradiction');
  });

  it('a profile that contradicts a setting: an alert naming both values', async () => {
    writeFileSync(path, JSON.stringify(profile('formula')));
    expect(await page()).toMatch(/<div class="alert" role="alert" data-profile-contradiction>PARTNER_SIGNATURE_FORM=example, but the partner&#39;s answers imply PARTNER_SIGNATURE_FORM=formula\. The worker refuses to start until they agree\.<\/div>/);
  });
});
