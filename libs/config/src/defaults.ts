import { ConfigError } from './config-error';

/**
 * The public development values: with CARDPULL_PROFILE=local (which `npm start`, the tests and the
 * benchmarks set) and nothing else set, the service talks to the simulator on 127.0.0.1:4010 with the
 * simulator's own credentials, seals cards with a public key, accepts `local-dev-key` and logs operators in
 * with admin:admin. They are public: in any other profile they are neither defaults nor accepted
 * (docs/SECURITY.md, fail closed).
 */
export const LOCAL_DEFAULTS = {
  PARTNER_API_KEY: 'sim-api-key',
  PARTNER_IDENTIFIER: 'sim-identifier',
  PARTNER_SHARED_KEY: '6b1f0c3e5a7d9b2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d',
  CARD_ENCRYPTION_KEYS: 'dev-1:ZGV2ZWxvcG1lbnQta2V5LW5vdC1mb3ItcHJvZHVjdGk=',
  API_KEYS: 'local:local-dev-key',
  ADMIN_USERS: 'admin:admin',
} as const;

/**
 * The local development client's callbacks (the client of LOCAL_DEFAULTS.API_KEYS). Under the local
 * profile, unless CALLBACK_URLS or CALLBACK_SECRETS name that client, its callbacks go to the simulator's
 * receiver (POST /_callbacks on the partner's address, which lists them at GET /_callbacks), signed with
 * this public secret, which the simulator checks. Outside the local profile the secret is refused.
 */
export const LOCAL_CALLBACKS = { client: 'local', secret: 'local-callback-secret-public', path: '/_callbacks' } as const;

/** Switches the local profile turns on when unset: callbacks may go to the simulator over http: (CALLBACK_ALLOW_LOCAL). */
const LOCAL_SWITCHES = { CALLBACK_ALLOW_LOCAL: 'true' } as const;

/** The profile whose public development defaults apply: only `local`. */
export const LOCAL_PROFILE = 'local';
export const REQUIRED_OUTSIDE_LOCAL = 'is required (its public development default applies only with CARDPULL_PROFILE=local)';

/**
 * CARD_ENCRYPTION_KEYS_FILE: the vault keys read from a file (same format as CARD_ENCRYPTION_KEYS, one entry
 * per line or comma-separated) instead of an environment variable, which every child process and crash dump
 * would see. The file is where a secret manager mounts them, or where a start-up step writes the data keys
 * it unwrapped with a KMS (envelope encryption: the KMS key never leaves the KMS). Both set: refused.
 */
export function withKeyFile(env: Record<string, string | undefined>, read: (path: string) => string): Record<string, string | undefined> {
  const path = env.CARD_ENCRYPTION_KEYS_FILE?.trim();
  if (!path) return env;
  const refuse = (message: string) => new ConfigError([{ setting: 'CARD_ENCRYPTION_KEYS_FILE', message }]);
  if (env.CARD_ENCRYPTION_KEYS?.trim()) throw refuse('is set together with CARD_ENCRYPTION_KEYS: keep one');
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    throw refuse(`cannot read ${path} (${(error as Error).message})`);
  }
  const keys = text
    .split(/[\n,]/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .join(',');
  return { ...env, CARD_ENCRYPTION_KEYS: keys };
}

/** `env` with the public development values filled in where unset, when (and only when) CARDPULL_PROFILE=local. */
export function withProfileDefaults(env: Record<string, string | undefined>): Record<string, string | undefined> {
  if ((env.CARDPULL_PROFILE ?? '').trim().toLowerCase() !== LOCAL_PROFILE) return env;
  const out = { ...env };
  for (const [name, value] of Object.entries({ ...LOCAL_DEFAULTS, ...LOCAL_SWITCHES })) if (!out[name]?.trim()) out[name] = value;
  return out;
}

/**
 * The local client's callbacks under the local profile (LOCAL_CALLBACKS): its URL defaults to the receiver
 * on the partner's address (the simulator's, since the local profile runs only against a local partner;
 * only while CALLBACK_ALLOW_LOCAL lets callbacks go there) and its secret to the public one.
 */
export function withLocalCallbacks(s: {
  CARDPULL_PROFILE: string;
  CALLBACK_ALLOW_LOCAL: boolean;
  CALLBACK_URLS: Map<string, string>;
  CALLBACK_SECRETS: Map<string, string>;
}, partnerBaseUrl: string): { CALLBACK_URLS: Map<string, string>; CALLBACK_SECRETS: Map<string, string> } {
  const urls = new Map(s.CALLBACK_URLS);
  const secrets = new Map(s.CALLBACK_SECRETS);
  if (s.CARDPULL_PROFILE === LOCAL_PROFILE) {
    const { client, secret, path } = LOCAL_CALLBACKS;
    if (!secrets.has(client)) secrets.set(client, secret);
    if (!urls.has(client) && s.CALLBACK_ALLOW_LOCAL && URL.canParse(partnerBaseUrl)) urls.set(client, `${new URL(partnerBaseUrl).origin}${path}`);
  }
  return { CALLBACK_URLS: urls, CALLBACK_SECRETS: secrets };
}
