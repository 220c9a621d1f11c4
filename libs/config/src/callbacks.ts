import type { z } from 'zod';

/** Index of the first of `chars` in `text` (-1: none). */
function firstOf(text: string, chars: string): number {
  for (let i = 0; i < text.length; i++) if (chars.includes(text[i]!)) return i;
  return -1;
}

/**
 * Comma-separated `client<separator>value` entries; an entry without a client or with a bad value is
 * refused. `separator` may list several characters: the first of them in an entry separates (client names
 * have none of them).
 */
function parseClientMap(raw: string | undefined, ctx: z.RefinementCtx, separator: string, valid: (value: string) => boolean, expected: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const [index, entry] of (raw ?? '').split(',').map((e) => e.trim()).filter(Boolean).entries()) {
    const at = firstOf(entry, separator);
    const value = entry.slice(at + 1);
    if (at < 1 || !valid(value)) ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: expected ${expected}` });
    else map.set(entry.slice(0, at), value);
  }
  return map;
}

/** CALLBACK_URLS: comma-separated `client=https://...` default callback URL per client. */
export const parseCallbackUrls = (raw: string | undefined, ctx: z.RefinementCtx): Map<string, string> =>
  parseClientMap(raw, ctx, '=', isHttpUrl, 'client=https://host/path');

/**
 * CALLBACK_SECRETS: comma-separated `client=secret`, the syntax of CALLBACK_URLS; callbacks to that client
 * are signed with its secret. The older `client:secret` is still read (deprecated; README, Callbacks).
 */
export const parseCallbackSecrets = (raw: string | undefined, ctx: z.RefinementCtx): Map<string, string> =>
  parseClientMap(raw, ctx, '=:', (secret) => secret.length >= 16, 'client=secret with a secret of at least 16 characters');

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** CALLBACK_ALLOWED_HOSTS: comma-separated `client=host|host`, a host being a name or `*.domain` (its subdomains). */
export function parseCallbackHosts(raw: string | undefined, ctx: z.RefinementCtx): Map<string, string[]> {
  const lists = parseClientMap(raw, ctx, '=', (v) => v.split('|').every((h) => /^(\*\.)?[a-z0-9.-]+$/i.test(h)), 'client=host|*.domain');
  return new Map([...lists].map(([client, hosts]) => [client, hosts.split('|').map((h) => h.toLowerCase())]));
}

export interface SpendLimit {
  /** Largest face value of one order, in minor units (null: no limit). */
  maxOrder: number | null;
  /** Total face value of one day's orders (UTC), in minor units (null: no limit). */
  perDay: number | null;
}

/** SPEND_LIMITS: comma-separated `client=<largest order>/<per day>` in minor units; either side may be empty (no limit). */
export function parseSpendLimits(raw: string | undefined, ctx: z.RefinementCtx): Map<string, SpendLimit> {
  const amount = (v: string) => v === '' || /^\d{1,15}$/.test(v);
  const entries = parseClientMap(raw, ctx, '=', (v) => /^[^/]*\/[^/]*$/.test(v) && v.split('/').every(amount) && v !== '/', 'client=<largest order>/<per day> (minor units; one side may be empty)');
  return new Map(
    [...entries].map(([client, v]) => {
      const [maxOrder, perDay] = v.split('/') as [string, string];
      return [client, { maxOrder: maxOrder === '' ? null : Number(maxOrder), perDay: perDay === '' ? null : Number(perDay) }];
    }),
  );
}

/**
 * CLIENT_WEIGHTS: comma-separated `client=<weight>` (a number from 0.01 to 1000; unlisted clients weigh 1):
 * a client of weight w may send w times as many orders as another before its new orders go after theirs
 * in the queue (libs/orders fair-share.ts).
 */
export function parseClientWeights(raw: string | undefined, ctx: z.RefinementCtx): Map<string, number> {
  const weights = parseClientMap(raw, ctx, '=', (v) => /^\d+(\.\d+)?$/.test(v) && Number(v) >= 0.01 && Number(v) <= 1_000, 'client=<weight from 0.01 to 1000>');
  return new Map([...weights].map(([client, w]) => [client, Number(w)]));
}
