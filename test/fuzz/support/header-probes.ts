import * as fc from 'fast-check';
import { KEYS } from '../../support/stack';
import { GOOD, longString, objectText, visibleString } from './hostile-values';
import { probe, rawRequest, type Probe } from './probe';

/** Probes of the headers: Content-Type, Idempotency-Key, Authorization. The body is always a valid order. */

const GOOD_TEXT = objectText(GOOD);
/** What a header value may hold for undici (it refuses CR, LF, NUL and other controls, and anything above U+00FF). */
const headerSafe = (o: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: fc.oneof(fc.constant('\t'), fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c))), ...o });
/** Node strips a header value's surrounding spaces and tabs: what the API then sees. */
const asReceived = (v: string) => v.replace(/^[ \t]+|[ \t]+$/g, '');

/** What requireJson accepts: anything else must be refused with 415. */
const jsonMediaType = /^application\/json\s*(;|$)/i;

/** Only application/json bodies are read, and only as UTF-8: other media types are 415, other encodings not JSON. */
export const contentTypeProbe: fc.Arbitrary<Probe> = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(
    fc.constantFrom<string | null>(null, '', 'text/plain', 'text/plain; charset=utf-8', 'text/json', 'application/xml', 'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x', 'application/jsonx', 'application/json-patch+json', 'application/vnd.api+json', 'application/ld+json', 'json', '*/*',
      'application/*', 'application', 'application/', '/json', 'application/octet-stream', 'application/javascript', 'text/html', 'x/y', 'application/json5',
      'application/jsonl', 'application/ json', 'application /json', 'application\\/json', 'application/jso', 'applicationjson', 'text/plain; application/json'),
    headerSafe({ maxLength: 60 }),
    fc.tuple(headerSafe({ maxLength: 10 }), fc.constantFrom('application/json', 'APPLICATION/JSON'), headerSafe({ maxLength: 10 })).map(([a, m, b]) => a + m + b),
  ).filter((ct) => ct === null || !jsonMediaType.test(asReceived(ct))).map((contentType) =>
    probe({ rule: 'not application/json', contentType, body: GOOD_TEXT, expect: { statuses: [415], codes: ['unsupported_media_type'] } })) },
  // The charset parameter is ignored (RFC 8259: JSON is UTF-8): a body really in another encoding is not valid JSON.
  { weight: 1, arbitrary: fc.constantFrom<[string, BufferEncoding]>(['utf-16', 'utf16le'], ['utf-16le', 'utf16le'], ['UTF-16', 'ucs2'], ['utf-32', 'utf16le']).chain(([charset, enc]) =>
    fc.boolean().map((bom) => probe({ rule: `body in ${charset}`, contentType: `application/json; charset=${charset}`,
      body: Buffer.from((bom ? '\ufeff' : '') + (charset === 'utf-32' ? GOOD_TEXT.replace(/./g, (c) => `${c}\0`) : GOOD_TEXT), enc), expect: { statuses: [400], codes: ['invalid_json'] } }))) },
);

const keyRule = 'Idempotency-Key not 1-255 visible ASCII';
const KEY_REFUSED = { statuses: [400], codes: ['idempotency_key_missing', 'idempotency_key_invalid'] } as const;
/** Over 16 KiB of headers Node answers 431 itself. */
const HEADERS_TOO_LARGE = { statuses: [431], parserRefusal: true } as const;
const visibleNoColon = visibleString({ minLength: 1, maxLength: 20 }).map((s) => s.replaceAll(':', '.'));
const controlChar = fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0x0a, max: 0x1f }), fc.constant(0x7f)).map((c) => String.fromCharCode(c));

const rawKeyProbe = (rule: string, headerLines: Buffer | string) =>
  probe({ rule, raw: rawRequest(Buffer.from(headerLines as string), GOOD_TEXT), expect: { ...KEY_REFUSED, parserRefusal: true } });

/** Idempotency-Key must be 1-255 visible ASCII characters; CR/LF/NUL injection never yields a usable key. */
export const idempotencyKeyProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.oneof(
    fc.constantFrom<string | null>(null, '', ' ', '\t', '   \t  '),
    longString(256, 8000),
    fc.tuple(visibleString({ minLength: 1, maxLength: 30 }), headerSafe({ minLength: 1, maxLength: 5 }).filter((s) => !/^[\x21-\x7e]+$/.test(s)), visibleString({ minLength: 1, maxLength: 30 }))
      .map((p) => p.join('')),
    headerSafe({ maxLength: 300 }).filter((k) => { const v = asReceived(k); return !(v.length >= 1 && v.length <= 255 && /^[\x21-\x7e]+$/.test(v)); }),
  ).map((idempotencyKey) => probe({ rule: keyRule, idempotencyKey, body: GOOD_TEXT, expect: KEY_REFUSED })),
  longString(17_000, 40_000).map((idempotencyKey) => probe({ rule: 'Idempotency-Key over 16 KiB', idempotencyKey, body: GOOD_TEXT, expect: HEADERS_TOO_LARGE })),
  fc.tuple(visibleNoColon, controlChar, visibleNoColon).map(([a, c, b]) => rawKeyProbe('control character in Idempotency-Key', `Idempotency-Key: ${a}${c}${b}\r\n`)),
  fc.tuple(visibleNoColon, visibleString({ minLength: 1, maxLength: 20 })).map(([a, b]) => rawKeyProbe('CRLF injects a second Idempotency-Key', `Idempotency-Key: ${a}\r\nIdempotency-Key: ${b}\r\n`)),
  fc.tuple(fc.constantFrom('', 'a b', 'k'.repeat(256), 'x\ty'), visibleNoColon).map(([a, b]) => rawKeyProbe('CRLF injects another header after a bad key', `Idempotency-Key: ${a}\r\nX-Injected-${b}: 1\r\n`)),
  fc.tuple(visibleNoColon, visibleNoColon).map(([a, b]) => rawKeyProbe('obs-fold in Idempotency-Key', `Idempotency-Key: ${a}\r\n ${b}\r\n`)),
  fc.tuple(visibleNoColon, fc.constantFrom('Content-Length: 0', 'Content-Length: 1', 'Transfer-Encoding: chunked', 'Content-Length: -1', 'Content-Length: 1e3'))
    .map(([a, smuggle]) => probe({ rule: `CRLF injects ${smuggle}`, raw: rawRequest(Buffer.from(`Idempotency-Key: ${a}\r\n${smuggle}\r\n`), GOOD_TEXT), expect: { statuses: [400], parserRefusal: true } })),
  fc.tuple(visibleNoColon, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }).filter((s) => /[^\x00-\x7f]/.test(s)), visibleNoColon).map(([a, u, b]) =>
    rawKeyProbe('UTF-8 in Idempotency-Key', Buffer.concat([Buffer.from(`Idempotency-Key: ${a}`), Buffer.from(u, 'utf8'), Buffer.from(`${b}\r\n`)]))),
  fc.tuple(visibleNoColon, fc.constantFrom('5', '500', '', 'abc')).map(([a, length]) =>
    probe({ rule: `Content-Length ${JSON.stringify(length)} does not match the body`, raw: rawRequest(Buffer.from(`Idempotency-Key: ${a}\r\n`), GOOD_TEXT, { contentLength: length }), expect: { statuses: [400], parserRefusal: true } })),
);

/** What the guard accepts with orders:write (`Bearer <key>`); everything else must be refused. */
const WRITE_KEYS = new Set([KEYS.shop, KEYS.noCards, KEYS.other]);
const grantsWrite = (header: string | null) => {
  const match = header === null ? null : /^Bearer\s+(\S+)\s*$/i.exec(asReceived(header));
  return !!match && WRITE_KEYS.has(match[1]!);
};
const shop = KEYS.shop;

/** POST /v1/orders needs `Authorization: Bearer <key>` of a client with orders:write: 401 otherwise, 403 without the scope. */
export const authorizationProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.oneof(
    fc.constantFrom<string | null>(null, '', 'Bearer', 'Bearer ', 'bearer', 'Basic c2hvcDpzaG9w', `Token ${shop}`, shop, `Bearer ${shop}x`, `Bearer ${shop.slice(0, -1)}`,
      `Bearer ${shop} extra`, `Bearer ${shop.toUpperCase()}`, `Bearer "${shop}"`, `Bearer=${shop}`, `Bearer:${shop}`, `${shop} Bearer`, `Bearer ${shop},${shop}`, `BearerX ${shop}`,
      `Bearer ${'a'.repeat(5000)}`, `Bearer \u00e9${shop}`),
    headerSafe({ maxLength: 80 }),
    fc.tuple(fc.constantFrom('Bearer ', 'bearer\t', 'BEARER  '), fc.oneof(visibleString({ minLength: 1, maxLength: 60 }), fc.constant(shop).map((k) => k + '0'))).map(([s, k]) => s + k),
  ).filter((h) => !grantsWrite(h)).map((authorization) => probe({ rule: 'no valid Bearer key', authorization, body: GOOD_TEXT, expect: { statuses: [401], codes: ['unauthorized'] } })),
  fc.constantFrom(`Bearer ${KEYS.readOnly}`, `bearer   ${KEYS.readOnly}  `).map((authorization) =>
    probe({ rule: 'key without orders:write', authorization, body: GOOD_TEXT, expect: { statuses: [403], codes: ['forbidden'] } })),
  fc.tuple(visibleNoColon.filter((a) => !WRITE_KEYS.has(a)), fc.constantFrom('\r\nX-Forwarded-For: 1.2.3.4', '\u0000', '\r', '\n')).map(([a, inj]) =>
    probe({ rule: 'injection in Authorization', raw: Buffer.from(rawRequest(Buffer.from(`Idempotency-Key: ${a}\r\n`), GOOD_TEXT).toString('latin1').replace(`Bearer ${shop}`, `Bearer ${a}${inj}`), 'latin1'),
      expect: { statuses: [400, 401], codes: ['unauthorized'], parserRefusal: true } })),
);
