import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where a callback may go (docs/SECURITY.md, server-side request forgery). A client chooses the URL the
 * worker posts to, so without these rules it could make the worker call 127.0.0.1, the cloud's metadata
 * address (169.254.169.254), a database on the private network or the simulator's control API:
 *  - outside local runs (CALLBACK_ALLOW_LOCAL off) only `https:`, and never an address that is loopback,
 *    private, link-local, unique-local, carrier-grade NAT, multicast or unspecified, IPv4 or IPv6 (an
 *    IPv4-mapped IPv6 address is read as its IPv4). Intake refuses such a URL when its host is an address
 *    or `localhost`; the worker checks the addresses a name resolves to when it connects (so a name that
 *    resolves, or later re-resolves, to a private address is refused too: no DNS rebinding);
 *  - a client with an allow-list (CALLBACK_ALLOWED_HOSTS) may only name those hosts (`*.example.com` for
 *    the subdomains of example.com);
 *  - redirects are never followed (undici's request follows none): a 3xx is a failed delivery.
 */
const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/** Whether an IP address is one a callback must never reach. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return NOT_PUBLIC.check(mapped[1]!, 'ipv4');
  const family = isIP(bare);
  if (family === 4) return NOT_PUBLIC.check(bare, 'ipv4');
  if (family === 6) return NOT_PUBLIC.check(bare, 'ipv6');
  return false;
}

export interface CallbackTargetRules {
  /** Local runs: `http:` and private addresses are allowed (the tests' receivers listen on 127.0.0.1). */
  allowLocal: boolean;
  /** Per client, the hosts its callbacks may go to; a client without an entry may name any public host. */
  allowedHosts: ReadonlyMap<string, readonly string[]>;
}

/** The rules of a service's settings. */
export const callbackRules = (s: { CALLBACK_ALLOW_LOCAL: boolean; CALLBACK_ALLOWED_HOSTS: ReadonlyMap<string, readonly string[]> }): CallbackTargetRules => ({
  allowLocal: s.CALLBACK_ALLOW_LOCAL,
  allowedHosts: s.CALLBACK_ALLOWED_HOSTS,
});

const hostMatches = (host: string, pattern: string): boolean =>
  pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1 : host === pattern;

/** Why `url` may not be a callback URL of `client` (null when it may), as intake tells the caller. */
export function callbackUrlProblem(url: string, client: string, rules: CallbackTargetRules): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an http(s) URL';
  }
  // A trailing dot names the same host (localhost. is localhost).
  const host = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (parsed.username || parsed.password) return 'must not carry credentials';
  const allowed = rules.allowedHosts.get(client);
  if (allowed && !allowed.some((p) => hostMatches(host, p))) return `host ${host} is not in this client's CALLBACK_ALLOWED_HOSTS`;
  if (rules.allowLocal) return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? null : 'must be an http(s) URL';
  if (parsed.protocol !== 'https:') return 'must be an https URL';
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) return `host ${host} is a loopback, private or link-local address`;
  return null;
}

/**
 * A DNS lookup for the callbacks' HTTP agent that refuses, at connect time, a name resolving to an address
 * a callback must never reach: the address checked is the one the socket connects to.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as LookupAddress[];
    const refused = list.find((a) => isNonPublicAddress(a.address));
    if (refused || list.length === 0) {
      const error = Object.assign(new Error(`callback refused: ${hostname} resolves to ${refused?.address ?? 'nothing'}, a loopback, private or link-local address`), { code: 'ECALLBACKREFUSED' });
      return callback(error, '', 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};
