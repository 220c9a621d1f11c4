import type { ServiceConfig } from '@cardpull/config';
import { checkPartnerProfile, type ProfileCheck } from '@cardpull/partner-client';

type Settings = Pick<ServiceConfig, 'PARTNER_PROFILE' | 'PARTNER_BASE_URL' | 'PARTNER_SIGNATURE_FORM' | 'PARTNER_DISCOUNT_UNIT' | 'PARTNER_BALANCE_UNIT'>;

/**
 * At the worker's start: the partner profile npm run probe wrote (PARTNER_PROFILE) against the settings. A
 * setting it contradicts, or a file that is not a profile, stops the worker before any partner call, naming
 * the setting, its value and the value the partner's answers imply. A profile of another environment is
 * only a warning: it says nothing of this one.
 */
export function checkPartnerProfileOrExit(config: Settings): void {
  let check: ProfileCheck;
  try {
    check = checkPartnerProfile(config);
  } catch (error) {
    process.stderr.write(`[worker] cannot start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  if (check.kind === 'contradicted') {
    process.stderr.write(`[worker] cannot start: ${check.message}\n`);
    process.exit(1);
  }
  if (check.kind === 'other_environment') {
    process.stderr.write(`[worker] warning: the partner profile ${check.path} was probed against ${check.profile.partner.base_url}, not ${config.PARTNER_BASE_URL}: not checked (run npm run probe against this environment)\n`);
  }
}
