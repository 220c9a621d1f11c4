import { isIP } from 'node:net';
import type { z } from 'zod';
import { LOCAL_CALLBACKS, LOCAL_DEFAULTS } from './defaults';
import { isPlainPassword, type AdminUser } from './admin-users';
import { isNonPublicAddress } from './callback-target';

interface EnvironmentSettings {
  CARDPULL_PROFILE: 'local' | 'deployed';
  CALLBACK_ALLOW_LOCAL: boolean;
  CALLBACK_SECRETS: ReadonlyMap<string, string>;
  PARTNER_ENV: 'staging' | 'production';
  PARTNER_BASE_URL: string;
  PARTNER_STAGING_BASE_URL?: string;
  PARTNER_PRODUCTION_BASE_URL?: string;
  PARTNER_API_KEY: string;
  PARTNER_IDENTIFIER: string;
  PARTNER_SHARED_KEY: string;
  CARD_ENCRYPTION_KEYS: { id: string; key: Buffer }[];
  API_KEYS: { key: string }[];
  ADMIN_USERS: AdminUser[];
  ADMIN_SESSION_SECRET?: string;
}

const LOCAL_HOST = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|::1|0\.0\.0\.0|sim|partner-sim)$/i;
const NON_PRODUCTION_HOST = /(^|[.-])(staging|stage|sandbox|test|dev)([.-]|$)/i;

const sameOrigin = (a: string, b: string) => {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
};

/**
 * Whether the local profile may talk to a partner at `host`: this machine (localhost, a loopback address),
 * a private address, a name without a dot (a docker-compose service such as the simulator's `sim`, or a
 * name of /etc/hosts) or `host.docker.internal` (the docker host). A real partner has a public name.
 */
export function isLocalPartnerHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'host.docker.internal') return true;
  if (isIP(host)) return isNonPublicAddress(host);
  return !host.includes('.');
}

const PUBLIC_VALUE = 'is the public development value: refused outside CARDPULL_PROFILE=local';

/**
 * Fail closed (docs/SECURITY.md). Outside CARDPULL_PROFILE=local (the default profile is `deployed`) the
 * public development values are refused, whatever PARTNER_ENV says: the simulator's credentials, the
 * development vault key, `local-dev-key`, the admin:admin operator, the local callback secret; the partner's URL must be https: and
 * callbacks may not reach local addresses. The local profile never runs against the production partner,
 * nor against any partner that is not local (isLocalPartnerHost): pointed at a real partner, a local run
 * would pull real cards with the public vault key, `local-dev-key` and admin:admin.
 */
function checkProfile(s: EnvironmentSettings, issue: (path: string, message: string) => void): void {
  if (s.CARDPULL_PROFILE === 'local') {
    if (s.PARTNER_ENV === 'production') issue('CARDPULL_PROFILE', 'local cannot be used with PARTNER_ENV=production');
    const host = new URL(s.PARTNER_BASE_URL).hostname;
    if (!isLocalPartnerHost(host)) {
      issue(
        'PARTNER_BASE_URL',
        `is not a local address (${host}) but CARDPULL_PROFILE is local, whose public development values (vault key, local-dev-key, admin:admin) ` +
          'are for the simulator only: a local run talks to loopback, a private address or a name without a dot (a docker-compose service such as sim). ' +
          'For a real partner set CARDPULL_PROFILE=deployed and its own secrets (README, "Pointing it at a real partner environment")',
      );
    }
    return;
  }
  if (s.PARTNER_API_KEY === LOCAL_DEFAULTS.PARTNER_API_KEY) issue('PARTNER_API_KEY', PUBLIC_VALUE);
  if (s.PARTNER_IDENTIFIER === LOCAL_DEFAULTS.PARTNER_IDENTIFIER) issue('PARTNER_IDENTIFIER', PUBLIC_VALUE);
  if (s.PARTNER_SHARED_KEY.toLowerCase() === LOCAL_DEFAULTS.PARTNER_SHARED_KEY) issue('PARTNER_SHARED_KEY', PUBLIC_VALUE);
  if (s.CARD_ENCRYPTION_KEYS.some((k) => LOCAL_DEFAULTS.CARD_ENCRYPTION_KEYS.endsWith(k.key.toString('base64')))) issue('CARD_ENCRYPTION_KEYS', `holds a key that ${PUBLIC_VALUE.slice(3)}`);
  if (s.API_KEYS.some((k) => k.key === 'local-dev-key')) issue('API_KEYS', `holds local-dev-key, which ${PUBLIC_VALUE.slice(3)}`);
  if (s.ADMIN_USERS.some((u) => u.name === 'admin' && u.secret === 'admin')) issue('ADMIN_USERS', `holds admin:admin, which ${PUBLIC_VALUE.slice(3)}`);
  if (new URL(s.PARTNER_BASE_URL).protocol !== 'https:') issue('PARTNER_BASE_URL', 'must be an https: URL outside CARDPULL_PROFILE=local');
  if (s.CALLBACK_ALLOW_LOCAL) issue('CALLBACK_ALLOW_LOCAL', 'may be true only with CARDPULL_PROFILE=local');
  if ([...s.CALLBACK_SECRETS.values()].includes(LOCAL_CALLBACKS.secret)) issue('CALLBACK_SECRETS', `holds the local callback secret, which ${PUBLIC_VALUE.slice(3)}`);
}

/**
 * PARTNER_ENV guard: the service refuses to start when production meets a staging or simulator URL, or
 * staging meets the production URL, and when production runs with plain operator passwords or without a
 * session secret; checkProfile refuses the public development values outside the local profile.
 */
export function checkEnvironment(s: EnvironmentSettings, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  const host = new URL(s.PARTNER_BASE_URL).hostname;
  checkProfile(s, issue);
  if (s.PARTNER_ENV === 'production') {
    if (LOCAL_HOST.test(host)) issue('PARTNER_BASE_URL', `is a local or simulator address (${host}) but PARTNER_ENV is production`);
    else if (NON_PRODUCTION_HOST.test(host)) issue('PARTNER_BASE_URL', `looks like a staging address (${host}) but PARTNER_ENV is production`);
    else if (s.PARTNER_STAGING_BASE_URL && sameOrigin(s.PARTNER_BASE_URL, s.PARTNER_STAGING_BASE_URL)) {
      issue('PARTNER_BASE_URL', 'is PARTNER_STAGING_BASE_URL but PARTNER_ENV is production');
    }
    if (s.PARTNER_PRODUCTION_BASE_URL && !sameOrigin(s.PARTNER_BASE_URL, s.PARTNER_PRODUCTION_BASE_URL)) {
      issue('PARTNER_BASE_URL', 'differs from PARTNER_PRODUCTION_BASE_URL while PARTNER_ENV is production');
    }
    if (s.ADMIN_USERS.some(isPlainPassword)) issue('ADMIN_USERS', 'plain passwords are refused with PARTNER_ENV=production: store scrypt hashes (npm run admin:hash-password)');
    if (!s.ADMIN_SESSION_SECRET) issue('ADMIN_SESSION_SECRET', 'is required with PARTNER_ENV=production (sessions must survive restarts and span API instances)');
  } else {
    if (s.PARTNER_PRODUCTION_BASE_URL && sameOrigin(s.PARTNER_BASE_URL, s.PARTNER_PRODUCTION_BASE_URL)) {
      issue('PARTNER_BASE_URL', 'is PARTNER_PRODUCTION_BASE_URL but PARTNER_ENV is staging');
    }
  }
}
