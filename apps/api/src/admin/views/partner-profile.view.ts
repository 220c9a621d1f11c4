import type { PartnerProfileModel } from '../operations/partner-profile.model';
import { time } from './format';
import { type Html, html } from './html';

const VERDICT: Record<string, string> = { as_assumed: 'as we assume', differs: 'differs', could_not_tell: 'could not tell' };

/**
 * The partner profile (npm run probe): when and against what it was probed, its verdicts counted, each
 * point behind a fold (the page stays short), and an alert for each setting it contradicts.
 */
export function partnerProfileSection(p: PartnerProfileModel): Html {
  const body = (() => {
    if (p.state === 'none') return html`<p class="muted small">None: no file at <span class="mono">${p.path}</span>. Run <span class="mono">npm run probe</span> against this partner (docs/operations.md, "Pointing cardpull at a new partner environment").</p>`;
    if (p.state === 'unreadable') return html`<div class="alert" role="alert">The file at <span class="mono">${p.path}</span> is not a partner profile: ${p.error}. The worker does not start with it.</div>`;
    const count = (v: string) => p.findings.filter((f) => f.verdict === v).length;
    return html`<p class="small" data-profile-date="${p.probedAt}">Probed ${time(p.probedAt)} against <span class="mono">${p.baseUrl}</span>:
      ${count('as_assumed')} as we assume, <b>${count('differs')} differ</b>, ${count('could_not_tell')} could not tell.</p>
    ${p.state === 'other_environment' ? html`<div class="warn small">Probed against another environment than PARTNER_BASE_URL: not checked here.</div>` : ''}
    ${p.contradictions.map((c) => html`<div class="alert" role="alert" data-profile-contradiction>${c}. The worker refuses to start until they agree.</div>`)}
    <details><summary class="small">Each point</summary>
      <table><thead><tr><th>Point</th><th>Verdict</th><th>What the probe saw</th></tr></thead>
      <tbody>${p.findings.map((f) => html`<tr data-verdict="${f.verdict}"><td>${f.title}</td><td class="nowrap">${VERDICT[f.verdict] ?? f.verdict}${f.setting && f.verdict === 'differs' ? html`: set <span class="mono">${f.setting}</span>` : ''}</td><td class="small">${f.finding}</td></tr>`)}</tbody></table>
    </details>`;
  })();
  return html`<section class="card" aria-label="Partner profile"><h2>Partner profile</h2>${body}</section>`;
}
