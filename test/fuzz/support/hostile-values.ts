import * as fc from 'fast-check';
import { MAX_AMOUNT } from '../../../apps/api/src/orders/order-input';

/**
 * Hostile JSON values and texts, each invalid for the field it is meant for by construction. Values are
 * kept as raw JSON text: JSON.stringify cannot write `1e400`, `-0`, duplicate keys or `__proto__` keys.
 */

export const FIELDS = ['gift_card_code', 'amount', 'mode', 'metadata', 'callback_url'] as const;
export type Field = (typeof FIELDS)[number];

/** A body the API accepts (a listed card and amount): every probe breaks it in one place. */
export const GOOD: [string, string][] = [
  ['gift_card_code', '"ACME-BOOKS-FIXED"'],
  ['amount', '2500'],
];

/** `{"k":v,...}` from raw pairs; keys are written as given (JSON-escaped), duplicates kept. */
export const objectText = (pairs: readonly (readonly [string, string])[]) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

/** The good body with `field` set to the raw value `value` (replacing it, or added). */
export const withField = (field: string, value: string) => objectText([...GOOD.filter(([k]) => k !== field), [field, value]]);

/** The spec's amount rule, used only to keep generated numbers on the invalid side of it. */
export const isValidAmount = (n: number) => Number.isInteger(n) && n >= 1 && n <= MAX_AMOUNT;

const char = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCharCode(c));
export const visibleAscii = char(0x21, 0x7e);
export const visibleString = (o: { minLength?: number; maxLength?: number } = {}) => fc.string({ unit: visibleAscii, ...o });
/** A long string of `min`-`max` characters repeating a short random unit: cheap to shrink (a length and a unit). */
export const longString = (min: number, max: number, unit: fc.Arbitrary<string> = visibleString({ minLength: 1, maxLength: 16 })) =>
  fc.tuple(unit, fc.integer({ min, max })).map(([u, n]) => u.repeat(Math.ceil(n / u.length)).slice(0, n));

/** One character no printable-ASCII rule allows: controls, space, DEL, Latin-1, BMP, astral, lone surrogates. */
export const nonVisibleChar: fc.Arbitrary<string> = fc.oneof(
  char(0x00, 0x20),
  fc.constant('\x7f'),
  char(0x80, 0xff),
  char(0x100, 0xd7ff),
  char(0xd800, 0xdfff),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  fc.constantFrom('\u200b', '\u202e', '\ufeff', '\u2028', '\uff21', '\u0430', 'é', '😀', '\u0301'),
);

/** Strings outside `^[\x21-\x7E]{1,100}$` (gift_card_code): empty, too long, or with a bad character inside. */
export const badCode: fc.Arbitrary<string> = fc.oneof(
  fc.constant(''),
  longString(101, 6000),
  fc.tuple(visibleString({ maxLength: 40 }), fc.array(nonVisibleChar, { minLength: 1, maxLength: 4 }), visibleString({ maxLength: 40 })).map(([a, b, c]) => a + b.join('') + c),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }).filter((s) => !/^[\x21-\x7e]+$/.test(s)),
);

/**
 * Any JSON value of a type the field does not take, as text. fast-check likes `__proto__` and `constructor`
 * as keys; the parser refuses those as invalid_json before the field rule is reached, so they are left to the
 * prototype-key probes.
 */
const jsonOf = (a: fc.Arbitrary<unknown>) => a.map((v) => JSON.stringify(v)).filter((t) => !/__proto__|constructor/.test(t));
const small = fc.jsonValue({ maxDepth: 2 });
export const jsonNumber = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })).map((n) => JSON.stringify(n));
export const jsonBool = fc.boolean().map(String);
export const jsonNull = fc.constant('null');
export const jsonArray = jsonOf(fc.array(small, { maxLength: 4 }));
export const jsonObject = jsonOf(fc.dictionary(fc.string({ maxLength: 8 }), small, { maxKeys: 4 }));
export const jsonString = jsonOf(fc.string({ unit: 'binary', maxLength: 40 }));

/** Amount texts that parse to a number the rule refuses: huge, negative, zero, fractional, exponent, beyond-safe. */
export const badAmountNumber: fc.Arbitrary<string> = fc
  .oneof(
    fc.constantFrom('1e400', '-1e400', '-0', '0', '0.0', '-0.0', '0e0', '1.0000000000000002', '9007199254740993', '9007199254740992',
      '18446744073709551616', '1e8000', '100000001', '1e9', '2500.5', '0.5', '1E-7', '1e-400', '-2500', '-1', '4.9e-324', '1.7976931348623157e308', '-9007199254740993'),
    fc.integer({ max: 0 }).map(String),
    fc.integer({ min: MAX_AMOUNT + 1 }).map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
    fc
      .tuple(fc.constantFrom('', '-'), fc.stringMatching(/^(0|[1-9][0-9]{0,24})$/), fc.option(fc.stringMatching(/^\.[0-9]{1,20}$/), { nil: '' }), fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,4}$/), { nil: '' }))
      .map((p) => p.join('')),
  )
  .filter((t) => !isValidAmount(Number(t)));

/** Number-like texts that are not JSON at all (the body is then malformed JSON). */
export const nanLikeAmount = fc.constantFrom('NaN', '-NaN', 'Infinity', '-Infinity', '+1', '+2500', '0x9C4', '02500', '.5', '2500.', '1e', '1e+', '--1', '2_500',
  '2500n', '٢٥٠٠', '２５００', '2,500', '25 00', 'undefined', 'True', 'nul');

/** Strings that are numbers to a human, never to the rule: the amount must be a JSON number. */
export const numericString = fc.oneof(fc.integer({ min: 1, max: MAX_AMOUNT }).map(String), fc.constantFrom('2500', ' 2500', '2500.0', '1e3', '0x9C4', '')).map((s) => JSON.stringify(s));

/** Modes other than exactly "sync" or "async". */
export const badMode = fc.oneof(
  fc.constantFrom('', 'SYNC', 'Async', 'sync ', ' async', 'sync\u0000', 'ѕync', 'async\n', 'synchronous', 'fast', 'null', 'sync,async'),
  badCode,
  fc.string({ unit: 'binary', maxLength: 30 }),
).filter((m) => m !== 'sync' && m !== 'async').map((m) => JSON.stringify(m));

/** Callback URLs that are not http(s) URLs: no scheme (no colon at all), another scheme, or too long. */
export const badCallbackUrl = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }).filter((s) => !s.includes(':')),
  fc.constantFrom('ftp://x.example/h', 'javascript:alert(1)', 'file:///etc/passwd', 'data:,x', 'mailto:a@b.c', 'ws://x.example', 'gopher://x', 'http://', 'https://', 'http://[::1', 'http://exa mple.com'),
  fc.integer({ min: 2049, max: 9000 }).map((n) => `https://shop.example/${'a'.repeat(n)}`),
).map((s) => JSON.stringify(s));

/** Metadata nested `depth` levels (arrays inside one object), written as text so it can be very deep. */
export const nestedMetadata = (depth: number, kind: 'array' | 'object' = 'array') =>
  kind === 'array' ? `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Metadata the rule refuses: not a JSON object, over 4 KiB of JSON, or nested deeper than 5. */
export const badMetadata = fc.oneof(
  fc.oneof(jsonNumber, jsonBool, jsonNull, jsonArray, jsonString),
  // 4,200-15,000 bytes of JSON: over the metadata limit, under the body limit (one unit is 1, 2, 3 or 6 bytes).
  fc.tuple(fc.integer({ min: 4200, max: 15000 }), fc.constantFrom(['x', 1], ['é', 2], ['€', 3], ['\\u0000', 6]))
    .map(([bytes, [c, size]]) => `{"blob":"${(c as string).repeat(Math.ceil(bytes / (size as number)))}"}`),
  fc.tuple(fc.integer({ min: 6, max: 60 }), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([d, k]) => nestedMetadata(d, k)),
);

/** For each field, values of the wrong type or outside its rule. */
export const badValueFor: Record<Field, fc.Arbitrary<string>> = {
  gift_card_code: fc.oneof(jsonNumber, jsonBool, jsonNull, jsonArray, jsonObject, badCode.map((s) => JSON.stringify(s))),
  amount: fc.oneof(numericString, jsonString, jsonBool, jsonNull, jsonArray, jsonObject, badAmountNumber),
  mode: fc.oneof(jsonNumber, jsonBool, jsonNull, jsonArray, jsonObject, badMode),
  metadata: badMetadata,
  callback_url: fc.oneof(jsonNumber, jsonBool, jsonNull, jsonArray, jsonObject, badCallbackUrl),
};

/** Field names the body must refuse: prototype keys, look-alikes of real fields, and anything else. */
export const unknownKey = fc
  .oneof(
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__', 'isPrototypeOf', 'Amount', 'AMOUNT', 'amount ',
      ' amount', 'amount\u0000', 'ａｍｏｕｎｔ', 'amоunt', 'giftCardCode', 'gift-card-code', 'callbackUrl', 'idempotency_key', 'id', 'status', 'card', 'client', ''),
    fc.string({ unit: 'binary', maxLength: 40 }),
    longString(300, 2500, fc.string({ unit: 'binary', minLength: 1, maxLength: 8 })),
  )
  .filter((k) => !(FIELDS as readonly string[]).includes(k));
