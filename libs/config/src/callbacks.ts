import type { z } from 'zod';

/** CALLBACK_URLS: comma-separated `client=https://...` default callback URL per client. */
export function parseCallbackUrls(raw: string | undefined, ctx: z.RefinementCtx): Map<string, string> {
  const map = new Map<string, string>();
  if (!raw) return map;
  for (const [index, entry] of raw.split(',').map((e) => e.trim()).filter(Boolean).entries()) {
    const eq = entry.indexOf('=');
    const client = entry.slice(0, eq);
    const url = entry.slice(eq + 1);
    if (eq < 1 || !isHttpUrl(url)) {
      ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: expected client=https://host/path` });
      continue;
    }
    map.set(client, url);
  }
  return map;
}

/** CALLBACK_SECRETS: comma-separated `client:secret`; callbacks to that client are signed with its secret. */
export function parseCallbackSecrets(raw: string | undefined, ctx: z.RefinementCtx): Map<string, string> {
  const map = new Map<string, string>();
  if (!raw) return map;
  for (const [index, entry] of raw.split(',').map((e) => e.trim()).filter(Boolean).entries()) {
    const colon = entry.indexOf(':');
    const client = entry.slice(0, colon);
    const secret = entry.slice(colon + 1);
    if (colon < 1 || secret.length < 16) {
      ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: expected client:secret with a secret of at least 16 characters` });
      continue;
    }
    map.set(client, secret);
  }
  return map;
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
