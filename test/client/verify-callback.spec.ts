import { CallbackVerificationError, CardpullError, ERROR_CLASSES, InvalidAmountError, errorFromAnswer, verifyCallback, type CallbackFailure } from '@cardpull/client';
import { CALLBACK_HEADERS, signCallback } from '@cardpull/orders';
import { ORDER_EXAMPLE } from '../../apps/api/src/docs/schemas';

const SECRET = 'shop-callback-secret-0001';
const NOW = 1_795_348_800_000;

/** A callback as the worker signs it (libs/orders signCallback, the one the deliverer uses). */
function signed(body: object, secret = SECRET, timestampS = NOW / 1000) {
  const raw = JSON.stringify(body);
  return {
    raw,
    headers: {
      [CALLBACK_HEADERS.eventId]: 'evt-1',
      [CALLBACK_HEADERS.eventType]: (body as { type?: string }).type ?? '',
      [CALLBACK_HEADERS.timestamp]: String(timestampS),
      [CALLBACK_HEADERS.signature]: signCallback(secret, timestampS, raw),
    } as Record<string, string | undefined>,
  };
}

const EVENT = { id: 'evt-1', type: 'order.completed', created_at: '2026-11-22T10:15:00.872Z', status: 'completed', order: ORDER_EXAMPLE };

function refusal(f: () => unknown): CallbackFailure {
  try {
    f();
  } catch (error) {
    if (error instanceof CallbackVerificationError) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('verifyCallback checks what the worker signs (HMAC-SHA256 of "<timestamp>.<raw body>"), in constant time, within a window', () => {
  it("accepts the server's signature and returns the typed event", () => {
    const { raw, headers } = signed(EVENT);
    const event = verifyCallback(raw, headers, SECRET, { now: NOW });
    expect(event).toEqual(EVENT);
  });

  it('refuses a changed body, another secret, a signature of another length, and a header left out', () => {
    const { raw, headers } = signed(EVENT);
    expect(refusal(() => verifyCallback(raw.replace('2500', '2501'), headers, SECRET, { now: NOW }))).toBe('invalid_signature');
    expect(refusal(() => verifyCallback(raw, headers, 'another-secret-0000', { now: NOW }))).toBe('invalid_signature');
    expect(refusal(() => verifyCallback(raw, { ...headers, [CALLBACK_HEADERS.signature]: 'v1=abc' }, SECRET, { now: NOW }))).toBe('invalid_signature');
    expect(refusal(() => verifyCallback(raw, { ...headers, [CALLBACK_HEADERS.signature]: headers[CALLBACK_HEADERS.signature]!.slice(3) }, SECRET, { now: NOW }))).toBe('invalid_signature');
    expect(refusal(() => verifyCallback(raw, { ...headers, [CALLBACK_HEADERS.timestamp]: undefined }, SECRET, { now: NOW }))).toBe('missing_header');
    expect(refusal(() => verifyCallback(raw, { ...headers, [CALLBACK_HEADERS.timestamp]: 'yesterday' }, SECRET, { now: NOW }))).toBe('invalid_timestamp');
  });

  it('refuses a timestamp outside the window either way (default 300 s), accepts one inside it', () => {
    const { raw, headers } = signed(EVENT);
    expect(verifyCallback(raw, headers, SECRET, { now: NOW + 300_000 }).id).toBe('evt-1');
    expect(refusal(() => verifyCallback(raw, headers, SECRET, { now: NOW + 301_000 }))).toBe('stale_timestamp');
    expect(refusal(() => verifyCallback(raw, headers, SECRET, { now: NOW - 301_000 }))).toBe('stale_timestamp');
    expect(verifyCallback(raw, headers, SECRET, { now: NOW + 3_600_000, toleranceSeconds: 3_600 }).id).toBe('evt-1');
  });

  it('rotation: any of several secrets, and any of several signatures of the header (comma or space separated)', () => {
    const { raw, headers } = signed(EVENT, 'the-new-secret-00001');
    expect(verifyCallback(raw, headers, ['the-old-secret-00001', 'the-new-secret-00001'], { now: NOW }).id).toBe('evt-1');
    const old = signCallback('the-old-secret-00001', NOW / 1000, raw);
    const both = { ...headers, [CALLBACK_HEADERS.signature]: `${old}, ${headers[CALLBACK_HEADERS.signature]}` };
    expect(verifyCallback(raw, both, 'the-new-secret-00001', { now: NOW }).id).toBe('evt-1');
    expect(verifyCallback(raw, both, 'the-old-secret-00001', { now: NOW }).id).toBe('evt-1');
    expect(refusal(() => verifyCallback(raw, both, 'a-third-secret-00001', { now: NOW }))).toBe('invalid_signature');
  });

  it("reads Node's header objects (any case, arrays) and fetch's Headers; takes the raw body as a string or bytes", () => {
    const { raw, headers } = signed(EVENT);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyCallback(raw, upper, SECRET, { now: NOW }).id).toBe('evt-1');
    expect(verifyCallback(new TextEncoder().encode(raw), new Headers(headers as Record<string, string>), SECRET, { now: NOW }).id).toBe('evt-1');
    expect(verifyCallback(raw, { ...headers, [CALLBACK_HEADERS.signature]: ['v1=00', headers[CALLBACK_HEADERS.signature]!] }, SECRET, { now: NOW }).id).toBe('evt-1');
  });

  it('catalog.changed (issue 25): accepted and typed, narrowed on type and kind; one without its changes is refused as invalid_body', () => {
    const body = {
      id: 'evt-2', type: 'catalog.changed', created_at: '2026-11-30T09:15:02.200Z', detected_at: '2026-11-30T09:15:02.118Z',
      changes: [{ id: '7', gift_card_code: 'ACME-BOOKS-FIXED', kind: 'face_values_changed', detected_at: '2026-11-30T09:15:02.118Z', before: { type: 'fixed', amounts: [1000, 2500] }, after: { type: 'fixed', amounts: [1000] }, withdrawn_amounts: [2500], added_amounts: [] }],
    };
    const { raw, headers } = signed(body);
    const event = verifyCallback(raw, headers, SECRET, { now: NOW });
    if (event.type !== 'catalog.changed') throw new Error('narrowing');
    const change = event.changes[0]!;
    expect(change.kind === 'face_values_changed' ? change.withdrawn_amounts : null).toEqual([2500]);
    const { changes: _left, ...without } = body;
    const bad = signed(without);
    expect(refusal(() => verifyCallback(bad.raw, bad.headers, SECRET, { now: NOW }))).toBe('invalid_body');
  });

  it('a signed body that is not an event this client knows is refused as invalid_body', () => {
    const unknown = signed({ ...EVENT, type: 'order.exploded', status: 'exploded' });
    expect(refusal(() => verifyCallback(unknown.raw, unknown.headers, SECRET, { now: NOW }))).toBe('invalid_body');
    const mixed = signed({ ...EVENT, type: 'order.failed' });
    expect(refusal(() => verifyCallback(mixed.raw, mixed.headers, SECRET, { now: NOW }))).toBe('invalid_body');
    const timestamp = String(NOW / 1000);
    const notJson = { [CALLBACK_HEADERS.timestamp]: timestamp, [CALLBACK_HEADERS.signature]: signCallback(SECRET, NOW / 1000, 'not json') };
    expect(refusal(() => verifyCallback('not json', notJson, SECRET, { now: NOW }))).toBe('invalid_body');
  });
});

describe('errorFromAnswer: the class of the envelope\'s code, the base class otherwise', () => {
  it('a known code gets its class, with code, message, status and the raw body', () => {
    const body = { errors: [{ code: 'invalid_amount', message: 'Invalid amount 1234' }], status: 'unprocessable_entity' };
    const error = errorFromAnswer(422, body);
    expect(error).toBeInstanceOf(InvalidAmountError);
    expect([error.code, error.message, error.status, error.body, error.name]).toEqual(['invalid_amount', 'Invalid amount 1234', 422, body, 'InvalidAmountError']);
  });

  it('a code this client does not know is a CardpullError itself, code kept; a body without the envelope is http_<status>', () => {
    const unknown = errorFromAnswer(418, { errors: [{ code: 'teapot', message: 'I am a teapot' }], status: 'http_418' });
    expect(unknown.constructor).toBe(CardpullError);
    expect([unknown.code, unknown.message, unknown.status]).toEqual(['teapot', 'I am a teapot', 418]);
    const html = errorFromAnswer(502, '<html>Bad gateway</html>');
    expect(html.constructor).toBe(CardpullError);
    expect([html.code, html.status, html.body]).toEqual(['http_502', 502, '<html>Bad gateway</html>']);
    // An inherited property name is not a code.
    expect(errorFromAnswer(400, { errors: [{ code: 'constructor', message: 'x' }] }).constructor).toBe(CardpullError);
  });

  it('every class answers its own code', () => {
    for (const [code, Class] of Object.entries(ERROR_CLASSES)) {
      const error = errorFromAnswer(400, { errors: [{ code, message: 'm' }], status: 'x' });
      expect([code, error instanceof Class, error.code]).toEqual([code, true, code]);
    }
  });
});
