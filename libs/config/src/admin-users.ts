import { scryptSync, randomBytes, timingSafeEqual } from 'node:crypto';
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

export function verifyAdminPassword(user: AdminUser, password: string): boolean {
  if (user.secret.startsWith(SCRYPT_PREFIX)) {
    const [, salt, hash] = user.secret.split('$') as [string, string, string];
    const expected = Buffer.from(hash, 'base64');
    const actual = scryptSync(password, Buffer.from(salt, 'base64'), expected.length);
    return timingSafeEqual(actual, expected);
  }
  const a = Buffer.from(user.secret);
  const b = Buffer.from(password);
  return a.length === b.length && timingSafeEqual(a, b);
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
    else if (secret.startsWith(SCRYPT_PREFIX) && secret.split('$').length !== 3) fail(`"${name}": malformed scrypt hash`);
    else if (users.some((u) => u.name === name)) fail(`user "${name}" is listed twice`);
    else users.push({ name, secret, role });
  }
  return users;
}
