import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

/**
 * The partner profile: what `npm run probe` learned of one partner environment on the points its
 * specification leaves "not shown" (the signature's form, the clock window, the shape of "come back later",
 * the units...), each with its evidence and, where the finding decides a setting, the value it implies.
 * The operator commits it beside the deployment's settings (PARTNER_PROFILE names the file); the worker
 * reads it at start and refuses to start when a setting contradicts it, and the operations page shows it.
 */
export const PROFILE_VERDICTS = ['as_assumed', 'differs', 'could_not_tell'] as const;
export type ProfileVerdict = (typeof PROFILE_VERDICTS)[number];

/** The settings a finding may decide, and the values each may take. */
export const PROFILE_SETTINGS = {
  PARTNER_SIGNATURE_FORM: ['example', 'formula'],
  PARTNER_DISCOUNT_UNIT: ['percent', 'fraction'],
  PARTNER_BALANCE_UNIT: ['major', 'minor'],
} as const;
export type ProfileSettingName = keyof typeof PROFILE_SETTINGS;
export type ProfileSettings = { [K in ProfileSettingName]: (typeof PROFILE_SETTINGS)[K][number] };

const settingSchema = z.strictObject({
  name: z.enum(Object.keys(PROFILE_SETTINGS) as [ProfileSettingName, ...ProfileSettingName[]]),
  value: z.string(),
});

const findingSchema = z.looseObject({
  /** A stable key of the point (`signature_form`, `clock_window`...). */
  point: z.string().min(1),
  title: z.string(),
  verdict: z.enum(PROFILE_VERDICTS),
  /** What the probe saw, in a sentence. */
  finding: z.string(),
  /** The calls and answers it rests on (status, code, headers: never a card's code or PIN). */
  evidence: z.array(z.unknown()),
  /** The setting this finding decides and the value the partner's behaviour implies. */
  setting: settingSchema.optional(),
});

export const partnerProfileSchema = z.looseObject({
  version: z.literal(1),
  probed_at: z.string().datetime({ offset: true }),
  partner: z.looseObject({ env: z.string(), base_url: z.string() }),
  findings: z.array(findingSchema),
});

export type ProfileFinding = z.infer<typeof findingSchema>;
export type PartnerProfile = z.infer<typeof partnerProfileSchema> & {
  /** Per endpoint: calls made and their latency (ms). */
  latency?: Record<string, { calls: number; p50_ms: number; p95_ms: number }>;
  /** What the probe spent: at most one card. */
  spent?: { cards: number; face_value: number; order_id?: string; request_id?: string };
  calls?: number;
};

/** A setting whose configured value the profile contradicts. */
export interface ProfileContradiction {
  setting: ProfileSettingName;
  configured: string;
  implied: string;
  point: string;
  finding: string;
}

/** Thrown when the profile cannot be read or does not parse: a profile that exists must say something. */
export class ProfileUnreadable extends Error {}

/**
 * The profile at `path`, or null when there is none (no file: nothing to check). A file that is not a
 * profile is an error: the operator committed something, and starting as if it said nothing would hide it.
 */
export function readPartnerProfile(path: string, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): PartnerProfile | null {
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ProfileUnreadable(`${path}: ${(error as Error).message}`);
  }
  return parsePartnerProfile(text, path);
}

export function parsePartnerProfile(text: string, source = 'the partner profile'): PartnerProfile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ProfileUnreadable(`${source} is not JSON: ${(error as Error).message}`);
  }
  const parsed = partnerProfileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ProfileUnreadable(`${source} is not a partner profile: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'profile'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data as PartnerProfile;
}

/** Whether the profile was probed against this base URL (a profile of another environment says nothing of this one). */
export const profileApplies = (profile: PartnerProfile, baseUrl: string): boolean => sameBase(profile.partner.base_url, baseUrl);

const sameBase = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** Each setting the profile's findings decide whose configured value differs from the one they imply. */
export function profileContradictions(profile: PartnerProfile, config: ProfileSettings): ProfileContradiction[] {
  const out: ProfileContradiction[] = [];
  for (const f of profile.findings) {
    if (!f.setting || f.verdict === 'could_not_tell') continue;
    const configured = config[f.setting.name];
    if (configured !== f.setting.value) out.push({ setting: f.setting.name, configured, implied: f.setting.value, point: f.point, finding: f.finding });
  }
  return out;
}

/** One line per contradiction, naming both values: what the worker refuses to start with. */
export function describeContradictions(path: string, profile: PartnerProfile, found: readonly ProfileContradiction[]): string {
  return [
    `the partner profile ${path} (probed ${profile.probed_at} against ${profile.partner.base_url}) contradicts ${found.length === 1 ? 'a setting' : `${found.length} settings`}:`,
    ...found.map((c) => `  ${c.setting}=${c.configured} but the partner's answers imply ${c.setting}=${c.implied} (${c.point}: ${c.finding})`),
    'Set the value the profile implies, or probe again (npm run probe) if the partner changed.',
  ].join('\n');
}

export type ProfileCheck =
  | { kind: 'none'; path: string }
  | { kind: 'other_environment'; path: string; profile: PartnerProfile }
  | { kind: 'consistent'; path: string; profile: PartnerProfile }
  | { kind: 'contradicted'; path: string; profile: PartnerProfile; contradictions: ProfileContradiction[]; message: string };

/** The settings the check reads: where the profile is, which environment is configured, and what it may contradict. */
export type ProfileCheckSettings = ProfileSettings & { PARTNER_PROFILE: string; PARTNER_BASE_URL: string };

/**
 * The partner profile (PARTNER_PROFILE, relative to `cwd`) against the settings: none there, one of another
 * environment (its base URL is not PARTNER_BASE_URL: it says nothing of this one), consistent, or
 * contradicted (each setting named with the value the partner's answers imply). A file that is not a
 * profile throws ProfileUnreadable.
 */
export function checkPartnerProfile(config: ProfileCheckSettings, cwd = process.cwd()): ProfileCheck {
  const path = isAbsolute(config.PARTNER_PROFILE) ? config.PARTNER_PROFILE : resolve(cwd, config.PARTNER_PROFILE);
  const profile = readPartnerProfile(path);
  if (!profile) return { kind: 'none', path };
  if (!profileApplies(profile, config.PARTNER_BASE_URL)) return { kind: 'other_environment', path, profile };
  const contradictions = profileContradictions(profile, config);
  return contradictions.length ? { kind: 'contradicted', path, profile, contradictions, message: describeContradictions(path, profile, contradictions) } : { kind: 'consistent', path, profile };
}
