import * as fc from 'fast-check';
import { probe, type Probe } from './probe';
import {
  FIELDS, GOOD, badAmountNumber, badCallbackUrl, badCode, badMetadata, badMode, badValueFor, jsonArray, jsonBool, jsonNull, jsonNumber, jsonObject,
  jsonString, nanLikeAmount, nestedMetadata, numericString, objectText, unknownKey, visibleString, withField,
} from './hostile-values';

/** Probes of the JSON body, one arbitrary per rule of the intake. Every body here is under 16 KiB unless it tests that limit. */

const INVALID_REQUEST = { statuses: [400], codes: ['invalid_request'] } as const;
const INVALID_JSON = { statuses: [400], codes: ['invalid_json'] } as const;
const TOO_LARGE = { statuses: [413], codes: ['payload_too_large'] } as const;
const LIMIT = 16 * 1024;
const GOOD_TEXT = objectText(GOOD);
const validBodies = fc.constantFrom(GOOD_TEXT, withField('mode', '"async"'), withField('metadata', '{"cart_id":"c-1","n":[1,{"k":null}]}'), objectText([...GOOD].reverse()));

/** Every field refuses a value of the wrong type; the required ones refuse absence; the body must be an object. */
export const wrongTypeProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.constantFrom(...FIELDS).chain((field) => {
    const wrongType = { gift_card_code: [jsonNumber, jsonBool, jsonNull, jsonArray, jsonObject], amount: [numericString, jsonString, jsonBool, jsonNull, jsonArray, jsonObject],
      mode: [jsonNumber, jsonBool, jsonNull, jsonArray, jsonObject], metadata: [jsonNumber, jsonBool, jsonNull, jsonArray, jsonString],
      callback_url: [jsonNumber, jsonBool, jsonNull, jsonArray, jsonObject] }[field];
    return fc.oneof(...wrongType).map((v) => probe({ rule: `${field} of the wrong type`, body: withField(field, v), expect: INVALID_REQUEST }));
  }),
  fc.subarray(['gift_card_code', 'amount'], { minLength: 1 }).map((missing) =>
    probe({ rule: `missing ${missing.join(', ')}`, body: objectText(GOOD.filter(([k]) => !missing.includes(k))), expect: INVALID_REQUEST })),
  fc.oneof(jsonNumber, jsonBool, jsonNull, jsonArray, jsonString, validBodies.map((b) => `[${b}]`)).map((b) => probe({ rule: 'body not a JSON object', body: b, expect: INVALID_REQUEST })),
);

/** amount is a JSON integer of minor units in 1..100,000,000: raw number texts, and number-like texts that are not JSON. */
export const amountProbe: fc.Arbitrary<Probe> = fc.oneof(
  { arbitrary: badAmountNumber.map((t) => probe({ rule: 'amount outside 1..100000000 or not an integer', body: withField('amount', t), expect: INVALID_REQUEST })), weight: 6 },
  { arbitrary: badValueFor.amount.map((t) => probe({ rule: 'amount not an integer number', body: withField('amount', t), expect: INVALID_REQUEST })), weight: 3 },
  { arbitrary: nanLikeAmount.map((t) => probe({ rule: 'amount not a JSON number at all', body: withField('amount', t), expect: INVALID_JSON })), weight: 1 },
);

/** gift_card_code (1-100 visible ASCII) and mode ("sync" | "async") refuse unicode, control characters and long strings. */
export const stringProbe: fc.Arbitrary<Probe> = fc.oneof(
  badCode.map((s) => probe({ rule: 'gift_card_code not 1-100 visible ASCII', body: withField('gift_card_code', JSON.stringify(s)), expect: INVALID_REQUEST })),
  badMode.map((m) => probe({ rule: 'mode not "sync" or "async"', body: withField('mode', m), expect: INVALID_REQUEST })),
);

/** metadata is an object of at most 4 KiB and depth 5; callback_url an http(s) URL of at most 2048 characters. */
export const optionalFieldProbe: fc.Arbitrary<Probe> = fc.oneof(
  badMetadata.map((m) => probe({ rule: 'metadata not an object within 4 KiB and depth 5', body: withField('metadata', m), expect: INVALID_REQUEST })),
  badCallbackUrl.map((u) => probe({ rule: 'callback_url not an http(s) URL', body: withField('callback_url', u), expect: INVALID_REQUEST })),
);

const anyJson = fc.oneof(jsonNumber, jsonBool, jsonNull, jsonArray, jsonObject, jsonString, fc.constant('{"prototype":{"amount":1}}'));
/** Prototype keys written with escapes: the parser decodes them to the same key. */
const escapedPrototypeKeys = ['"\\u005f_proto__"', '"__pro\\u0074o__"', '"\\u0063onstructor"'];

/** Unknown fields are refused, prototype keys included (at the top level or inside metadata). */
export const unknownFieldProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.tuple(unknownKey, anyJson, fc.nat(GOOD.length)).map(([key, value, at]) => {
    const pairs = [...GOOD];
    pairs.splice(at, 0, [key, value]);
    const prototypeKey = key === '__proto__' || key === 'constructor';
    return probe({ rule: 'unknown field', body: objectText(pairs), expect: { statuses: [400], codes: prototypeKey ? ['invalid_json', 'invalid_request'] : ['invalid_request'] } });
  }),
  fc.tuple(fc.constantFrom(...escapedPrototypeKeys), anyJson).map(([k, v]) =>
    probe({ rule: 'escaped prototype key', body: `${GOOD_TEXT.slice(0, -1)},${k}:${v}}`, expect: { statuses: [400], codes: ['invalid_json', 'invalid_request'] } })),
  fc.constantFrom(`{"__proto__":${GOOD_TEXT}}`, `{"constructor":{"prototype":${GOOD_TEXT}}}`, withField('metadata', '{"__proto__":{"admin":true}}'),
    withField('metadata', '{"constructor":{"prototype":{"admin":true}}}'), withField('metadata', '{"a":{"b":{"__proto__":{"amount":1}}}}'))
    .map((b) => probe({ rule: 'prototype pollution attempt', body: b, expect: { statuses: [400], codes: ['invalid_json', 'invalid_request'] } })),
);

const VALID_FIRST: Record<string, string> = { gift_card_code: '"ACME-BOOKS-FIXED"', amount: '2500', mode: '"sync"', metadata: '{}', callback_url: '"https://shop.example/cb"' };

/** With duplicate keys the last one counts: an invalid last value is refused, whatever came before. */
export const duplicateKeyProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.constantFrom(...FIELDS).chain((field) =>
    fc.tuple(fc.array(badValueFor[field], { maxLength: 2 }), badValueFor[field], fc.boolean()).map(([middle, last, firstValid]) => {
      const others = GOOD.filter(([k]) => k !== field);
      const first: [string, string][] = firstValid ? [[field, VALID_FIRST[field]!]] : [];
      const pairs = [...first, ...others, ...middle.map((v): [string, string] => [field, v]), [field, last] as [string, string]];
      const body = objectText(pairs);
      // Several long values may add up to more than the body limit: then that rule answers first.
      return probe({ rule: `duplicate ${field}, the last invalid`, body, expect: Buffer.byteLength(body) > LIMIT ? TOO_LARGE : INVALID_REQUEST });
    })),
  fc.constantFrom('{"amount":1,"amount":"x"}', '{"gift_card_code":"ACME-BOOKS-FIXED","amount":2500,"amount":"x"}', '{"gift_card_code":"ACME-BOOKS-FIXED","gift_card_code":null,"amount":2500}')
    .map((b) => probe({ rule: 'duplicate key, the last invalid', body: b, expect: INVALID_REQUEST })),
);

const BOM = '\ufeff';
const jsonWhitespace = new Set([' ', '\t', '\n', '\r']);
const nonWsChar = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => !jsonWhitespace.has(c) && c !== BOM);

/** Malformed JSON is refused as invalid_json (or invalid_request where it decodes to a wrong value). */
export const malformedJsonProbe: fc.Arbitrary<Probe> = fc.oneof(
  validBodies.chain((b) => fc.nat(b.length - 1).map((k) => probe({ rule: 'truncated JSON', body: b.slice(0, k), expect: INVALID_JSON }))),
  fc.tuple(validBodies, nonWsChar, fc.string({ unit: 'binary', maxLength: 30 })).map(([b, c, rest]) => probe({ rule: 'trailing garbage', body: b + c + rest, expect: INVALID_JSON })),
  fc.tuple(nonWsChar, validBodies).map(([c, b]) => probe({ rule: 'leading garbage', body: c + b, expect: INVALID_JSON })),
  fc.tuple(validBodies, fc.constantFrom<[string, (b: string) => string]>(
    ['single quotes', (b) => b.replaceAll('"', "'")],
    ['trailing comma', (b) => `${b.slice(0, -1)},}`],
    ['comment', (b) => b.replace('{', '{/* c */')],
    ['unquoted key', (b) => b.replace('"amount"', 'amount')],
    ['raw control character in a string', (b) => b.replace('ACME', 'AC\u0001ME')],
    ['raw newline in a string', (b) => b.replace('ACME', 'AC\nME')],
    ['invalid escape', (b) => b.replace('ACME', 'AC\\xME')],
    ['short unicode escape', (b) => b.replace('ACME', 'AC\\u12ME')],
    ['missing colon', (b) => b.replace('"amount":', '"amount" ')],
    ['two BOMs', (b) => BOM + BOM + b],
    ['NUL after the body', (b) => `${b}\u0000`],
    ['two bodies', (b) => b + b],
    ['body as a JSON string', (b) => JSON.stringify(b).slice(1)],
  )).map(([b, [rule, corrupt]]) => probe({ rule, body: corrupt(b), expect: INVALID_JSON })),
  fc.constantFrom('', ' ', '\r\n', '{', '}', '[', '"', 'nul', 'tru', '{"', '{"a"', '{"a":', BOM, `${BOM} `).map((b) => probe({ rule: 'no JSON value', body: b, expect: INVALID_JSON })),
  fc.tuple(fc.constantFrom('utf16le', 'latin1'), validBodies).map(([enc, b]) => probe({ rule: `body in ${enc}`, body: Buffer.from(b.replace('ACME', 'ÀCMÉ'), enc as BufferEncoding),
    expect: { statuses: [400], codes: enc === 'latin1' ? ['invalid_request'] : ['invalid_json'] } })),
  fc.tuple(fc.constantFrom(Buffer.from([0xc3, 0x28]), Buffer.from([0xff]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80])), visibleString({ maxLength: 10 }))
    .map(([bytes, s]) => probe({ rule: 'invalid UTF-8 in gift_card_code', body: Buffer.concat([Buffer.from(`{"amount":2500,"gift_card_code":"${s.replace(/["\\]/g, '')}`), bytes, Buffer.from('"}')]), expect: INVALID_REQUEST })),
  fc.tuple(wrongTypeProbe, fc.boolean()).map(([p, bom]) => probe({ ...p, rule: `BOM before: ${p.rule}`, body: bom ? BOM + (p.body as string) : `${BOM}${(p.body as string).slice(0, -1)}` ,
    expect: bom ? p.expect : { statuses: [400], codes: ['invalid_json', 'invalid_request'] } })),
);

const deepArrays = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;

/** Deep nesting is refused without exhausting the stack: up to the ~8,000 levels 16 KiB can hold, and 10,000+ levels. */
export const deepNestingProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.integer({ min: 6, max: 8000 }).map((d) => probe({ rule: `metadata nested ${d} levels (arrays)`, body: withField('metadata', nestedMetadata(d)), expect: INVALID_REQUEST })),
  fc.integer({ min: 6, max: 2700 }).map((d) => probe({ rule: `metadata nested ${d} levels (objects)`, body: withField('metadata', nestedMetadata(d, 'object')), expect: INVALID_REQUEST })),
  fc.tuple(fc.constantFrom('gift_card_code', 'amount', 'mode', 'callback_url', 'extra'), fc.integer({ min: 2, max: 8000 }))
    .map(([field, d]) => probe({ rule: `${field} nested ${d} levels`, body: withField(field, deepArrays(d)), expect: INVALID_REQUEST })),
  fc.integer({ min: 2, max: 8150 }).map((d) => probe({ rule: `whole body: arrays nested ${d} levels`, body: deepArrays(d), expect: INVALID_REQUEST })),
  fc.integer({ min: 2, max: 2700 }).map((d) => probe({ rule: `whole body: objects nested ${d} levels`, body: nestedMetadata(d, 'object'), expect: INVALID_REQUEST })),
  fc.integer({ min: 10_000, max: 16_000 }).map((d) => probe({ rule: `whole body: ${d} unclosed arrays`, body: '['.repeat(d), expect: INVALID_JSON })),
  fc.integer({ min: 10_000, max: 16_000 }).map((d) => probe({ rule: `metadata: ${d} unclosed arrays`, body: `${GOOD_TEXT.slice(0, -1)},"metadata":{"a":${'['.repeat(d)}`, expect: INVALID_JSON })),
  fc.integer({ min: 10_000, max: 100_000 }).map((d) => probe({ rule: `whole body: ${d} nested levels (over 16 KiB)`, body: deepArrays(d), expect: TOO_LARGE })),
);

/** Bodies over 16 KiB are refused with 413 before they are read as JSON, with or without a Content-Length. */
export const oversizedProbe: fc.Arbitrary<Probe> = fc.oneof(
  fc.integer({ min: LIMIT + 1, max: 256 * 1024 }),
  fc.integer({ min: 256 * 1024, max: 4 * 1024 * 1024 }),
).chain((size) => fc.constantFrom<Probe>(
  { rule: `${size} B valid-looking JSON`, body: withField('metadata', `{"blob":"${'x'.repeat(size)}"}`), expect: { statuses: [413] } },
  { rule: `${size} B garbage`, body: Buffer.alloc(size, 0x7b), expect: { statuses: [413] } },
  { rule: `${size} B text/plain`, contentType: 'text/plain', body: 'y'.repeat(size), expect: { statuses: [413] } },
  { rule: `${size} B chunked, no Content-Length`, body: '{"a":"', chunkedBytes: size, expect: { statuses: [413] } },
  { rule: `${size * 4} B chunked, no Content-Length`, body: ' ', chunkedBytes: size * 4, expect: { statuses: [413] } },
).map((p) => probe({ ...p, expect: TOO_LARGE })));
