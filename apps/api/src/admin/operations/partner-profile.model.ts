import { statSync } from 'node:fs';
import type { ServiceConfig } from '@cardpull/config';
import { checkPartnerProfile, type ProfileCheck, type ProfileVerdict } from '@cardpull/partner-client';

/** The partner profile as the operations page shows it (the file npm run probe wrote, PARTNER_PROFILE). */
export type PartnerProfileModel =
  | { state: 'none'; path: string }
  | { state: 'unreadable'; path: string; error: string }
  | {
      state: 'other_environment' | 'consistent' | 'contradicted';
      path: string;
      probedAt: string;
      baseUrl: string;
      findings: { title: string; verdict: ProfileVerdict; setting?: string; finding: string }[];
      /** One line per setting the profile contradicts (the worker refuses to start with them). */
      contradictions: string[];
    };

export type ProfileSettings = Pick<ServiceConfig, 'PARTNER_PROFILE' | 'PARTNER_BASE_URL' | 'PARTNER_SIGNATURE_FORM' | 'PARTNER_DISCOUNT_UNIT' | 'PARTNER_BALANCE_UNIT'>;

let cached: { key: string; model: PartnerProfileModel } | undefined;

/** Read again only when the file changed (its size and time): the page reads it on every load. */
export function partnerProfileModel(config: ProfileSettings): PartnerProfileModel {
  let key = 'none';
  try {
    const s = statSync(config.PARTNER_PROFILE);
    key = `${config.PARTNER_PROFILE}:${s.size}:${s.mtimeMs}`;
  } catch {
    // No file: the check says so.
  }
  if (cached?.key === key) return cached.model;
  cached = { key, model: build(config) };
  return cached.model;
}

function build(config: ProfileSettings): PartnerProfileModel {
  let check: ProfileCheck;
  try {
    check = checkPartnerProfile(config);
  } catch (error) {
    return { state: 'unreadable', path: config.PARTNER_PROFILE, error: (error as Error).message };
  }
  if (check.kind === 'none') return { state: 'none', path: check.path };
  return {
    state: check.kind,
    path: check.path,
    probedAt: check.profile.probed_at,
    baseUrl: check.profile.partner.base_url,
    findings: check.profile.findings.map((f) => ({ title: f.title, verdict: f.verdict, ...(f.setting ? { setting: `${f.setting.name}=${f.setting.value}` } : {}), finding: f.finding })),
    contradictions: check.kind === 'contradicted' ? check.contradictions.map((c) => `${c.setting}=${c.configured}, but the partner's answers imply ${c.setting}=${c.implied}`) : [],
  };
}
