import type { z } from 'zod';

/**
 * metrics:read opens GET /metrics (for a Prometheus scraper's key); statements:read the client's daily statements;
 * subscriptions:write subscribes the client to events beyond its orders' (catalog.changed), which then go to its
 * callback URL.
 */
export const SCOPES = ['orders:write', 'orders:read', 'cards:read', 'metrics:read', 'statements:read', 'subscriptions:write'] as const;
export type Scope = (typeof SCOPES)[number];

export interface ApiClient {
  client: string;
  key: string;
  scopes: ReadonlySet<Scope>;
}

/**
 * API_KEYS: comma-separated `client:key` or `client:key:scope+scope` entries. No scopes listed means all.
 * Keys must be unique (a key identifies its client); a client may have several keys (rotation).
 */
export function parseApiKeys(raw: string, ctx: z.RefinementCtx): ApiClient[] {
  const clients: ApiClient[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of raw.split(',').map((e) => e.trim()).entries()) {
    const fail = (why: string) => ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: ${why}` });
    // Scopes contain ':' themselves (orders:write), so only the first two colons separate fields.
    const first = entry.indexOf(':');
    const second = first < 0 ? -1 : entry.indexOf(':', first + 1);
    if (first < 0) {
      fail('expected client:key or client:key:scopes');
      continue;
    }
    const client = entry.slice(0, first);
    const key = second < 0 ? entry.slice(first + 1) : entry.slice(first + 1, second);
    const scopeText = second < 0 ? undefined : entry.slice(second + 1);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(client)) fail('client name must be 1-64 letters, digits, "_", "." or "-"');
    if (key.length < 8) fail('key must have at least 8 characters');
    if (seen.has(key)) fail('key is used twice');
    seen.add(key);
    const scopes = scopeText === undefined || scopeText === '' ? [...SCOPES] : scopeText.split('+');
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) fail(`unknown scope ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
    clients.push({ client, key, scopes: new Set(scopes as Scope[]) });
  }
  return clients;
}
