import type { z } from 'zod';

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/**
 * CARD_ENCRYPTION_KEYS: comma-separated `kid:base64key` entries, each key 32 bytes (AES-256).
 * The first entry encrypts new cards; the others only decrypt (key rotation).
 */
export function parseEncryptionKeys(raw: string, ctx: z.RefinementCtx): EncryptionKey[] {
  const keys: EncryptionKey[] = [];
  for (const [index, entry] of raw.split(',').map((e) => e.trim()).entries()) {
    const fail = (why: string) => ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: ${why}` });
    const colon = entry.indexOf(':');
    const id = entry.slice(0, colon);
    const b64 = entry.slice(colon + 1);
    if (colon < 1 || !/^[A-Za-z0-9_.-]{1,32}$/.test(id)) {
      fail('expected kid:base64key with a key id of 1-32 letters, digits, "_", "." or "-"');
      continue;
    }
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || Buffer.from(b64, 'base64').length !== 32) {
      fail(`key "${id}" must be 32 bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
      continue;
    }
    if (keys.some((k) => k.id === id)) fail(`key id "${id}" is used twice`);
    keys.push({ id, key: Buffer.from(b64, 'base64') });
  }
  return keys;
}
