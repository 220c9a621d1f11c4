import { scrypt, scryptSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';

export interface AdminUser {
  name: string;
  /** `scrypt$<salt b64>$<hash b64>`, or a plain password (local use only: refused with PARTNER_ENV=production). */
  secret: string;
  role: 'admin' | 'viewer';
}

const SCRYPT_PREFIX = 'scrypt$';

/** An operator's user name (ADMIN_USERS, and `npm run admin:hash-password`). */
export const ADMIN_USER_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

/** `npm run admin:hash-password`: the stored form of a password. */
export function hashAdminPassword(password: string): string {
  const salt = randomBytes(16);
  return `${SCRYPT_PREFIX}${salt.toString('base64')}$${scryptSync(password, salt, 32).toString('base64')}`;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** At least this many bytes of salt and of hash (hashAdminPassword writes 16 and 32). */
const MIN_SCRYPT_BYTES = 16;

/**
 * The salt and hash of a `scrypt$salt$hash` secret, or null when it is malformed: an empty or short hash
 * would compare equal to the scrypt of any password cut to its length (0 bytes: every password matches).
 */
export function scryptParts(secret: string): { salt: Buffer; hash: Buffer } | null {
  const parts = secret.split('$');
  if (parts.length !== 3 || parts[0] !== 'scrypt') return null;
  const [, salt, hash] = parts as [string, string, string];
  if (!BASE64.test(salt) || !BASE64.test(hash)) return null;
  const bytes = { salt: Buffer.from(salt, 'base64'), hash: Buffer.from(hash, 'base64') };
  return bytes.salt.length >= MIN_SCRYPT_BYTES && bytes.hash.length >= MIN_SCRYPT_BYTES ? bytes : null;
}

export function verifyAdminPassword(user: AdminUser, password: string): boolean {
  if (user.secret.startsWith(SCRYPT_PREFIX)) {
    const parts = scryptParts(user.secret);
    if (!parts) return false;
    return timingSafeEqual(scryptSync(password, parts.salt, parts.hash.length), parts.hash);
  }
  const a = Buffer.from(user.secret);
  const b = Buffer.from(password);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The check a server makes: the same as verifyAdminPassword, with scrypt on libuv's thread pool, so a
 * burst of login attempts never stalls the event loop (and the intake with it).
 */
export async function verifyAdminPasswordAsync(user: AdminUser, password: string): Promise<boolean> {
  if (!user.secret.startsWith(SCRYPT_PREFIX)) return verifyAdminPassword(user, password);
  const parts = scryptParts(user.secret);
  if (!parts) return false;
  const actual = await new Promise<Buffer>((resolve, reject) => scrypt(password, parts.salt, parts.hash.length, (err, key) => (err ? reject(err) : resolve(key))));
  return timingSafeEqual(actual, parts.hash);
}

export const isPlainPassword = (u: AdminUser): boolean => !u.secret.startsWith(SCRYPT_PREFIX);

/**
 * ADMIN_USERS: comma-separated `name:password` or `name:scrypt$salt$hash`, optionally `:viewer` (read-only)
 * or `:admin`. The operations page and the job dashboard log in with these, never with API keys.
 */
export function parseAdminUsers(raw: string, ctx: z.RefinementCtx): AdminUser[] {
  const users: AdminUser[] = [];
  for (const [index, entry] of raw.split(',').map((e) => e.trim()).entries()) {
    const fail = (why: string) => ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: ${why}` });
    const parts = entry.split(':');
    // A role suffix needs three parts (name:secret:role), so "admin:admin" is a user named admin.
    const last = parts[parts.length - 1];
    const role = parts.length >= 3 && (last === 'viewer' || last === 'admin') ? (parts.pop() as 'viewer' | 'admin') : 'admin';
    const [name, ...rest] = parts;
    const secret = rest.join(':');
    if (!name || !ADMIN_USER_NAME.test(name)) fail('expected name:password or name:scrypt$salt$hash[:viewer]');
    else if (secret.length < 4) fail(`the password of "${name}" must have at least 4 characters`);
    else if (secret.startsWith(SCRYPT_PREFIX) && !scryptParts(secret)) fail(`"${name}": malformed scrypt hash (expected scrypt$<salt, base64, 16+ bytes>$<hash, base64, 16+ bytes>, as npm run admin:hash-password writes)`);
    else if (users.some((u) => u.name === name)) fail(`user "${name}" is listed twice`);
    else users.push({ name, secret, role });
  }
  return users;
}
