/** A path of plain segments (then an optional query): group 1 is the path without a trailing '/'. */
const PLAIN_PATH = /^((?:\/[^/\\%.?#]+)*)\/?(?:\?.*)?$/s;

/**
 * The path a request's URL names, as the router reads it: percent-decoded, with `\` as `/`, empty and
 * `.` segments dropped and `..` resolved. Guards that match paths compare this, never the raw URL:
 * `/%64ocs/json` is routed to /docs/json, so it must be guarded as /docs/json.
 */
export function normalisedPath(url: string): string {
  // Most paths hold nothing to decode or resolve: no '%', '\\', '.' or empty segment. Such a path is its
  // own normal form (a trailing '/' aside). Every request's hooks ask this (the /docs guard), so it is kept cheap.
  const simple = PLAIN_PATH.exec(url);
  if (simple) return simple[1] || '/';
  const raw = url.split('?')[0] ?? '';
  let path = raw;
  try {
    path = decodeURIComponent(raw);
  } catch {
    // A malformed escape: the router will not decode it either.
  }
  const segments: string[] = [];
  for (const segment of path.replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/** Whether `url` (a request's raw URL or a matched route's pattern) is `prefix` or under it, case aside. */
export function isUnder(url: string, prefix: string): boolean {
  const path = normalisedPath(url).toLowerCase();
  const p = prefix.toLowerCase();
  return path === p || path.startsWith(`${p}/`);
}
