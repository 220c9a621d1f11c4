/**
 * The path a request's URL names, as the router reads it: percent-decoded, with `\` as `/`, empty and
 * `.` segments dropped and `..` resolved. Guards that match paths compare this, never the raw URL:
 * `/%64ocs/json` is routed to /docs/json, so it must be guarded as /docs/json.
 */
export function normalisedPath(url: string): string {
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
