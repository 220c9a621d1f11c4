import { startSimulator, useSimulator } from '../support/simulator';
import { call, ENVELOPE, pullSync } from './support/partner';
import { authorizationOf, hmacHexOf, payloadOf, tokenOf } from './support/signer';

const DEV_KEY = '6b1f0c3e5a7d9b2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d';
const OTHER_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

const sim = useSimulator();

describe('Signature: token and HMAC as the spec defines them (fixed vectors, computed with openssl)', () => {
  // printf '%s' '<token>' | openssl dgst -sha256 -mac HMAC -macopt hexkey:<DEV_KEY>
  const body = { card: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 } };

  it('POST payload: keys sorted at every depth, no spaces, lowercased', () => {
    expect(payloadOf(body)).toBe('{"card":{"amount":1000,"gift_card_code":"acme-books-fixed"}}');
  });

  it.each([
    ['example form (verb+url+payload+identifier+timestamp)', 'sim-identifier', 'be2b20515c03d0f9a0bf2d29a976b2769772b1adb5b558b4ac76fe58416b592f'],
    ['formula form (verb+url+payload+timestamp)', undefined, 'd187ff20a08eb5bb8c4eb1a5bef25afab36755dde18b6691d323bc237cc3bbfb'],
  ])('POST, %s', (_form, identifier, digest) => {
    const token = tokenOf({
      verb: 'POST',
      url: 'http://127.0.0.1:4010/partners/v1/cards',
      payload: payloadOf(body),
      identifier,
      timestamp: 1800000000,
    });
    expect(hmacHexOf(DEV_KEY, token)).toBe(digest);
  });

  it('GET with the empty payload part kept', () => {
    const token = tokenOf({
      verb: 'GET',
      url: 'http://127.0.0.1:4010/partners/v1/balance',
      payload: '',
      identifier: 'sim-identifier',
      timestamp: 1800000000,
    });
    expect(token).toBe('GET+http://127.0.0.1:4010/partners/v1/balance++sim-identifier+1800000000');
    expect(hmacHexOf(DEV_KEY, token)).toBe('d7b692ee2f507c5444dd1f0696827c25834a56a0e09cd6b788274d6d5133a5e8');
  });
});

describe('Authentication: the simulator accepts every form the spec gives', () => {
  it.each(['example', 'formula'] as const)('POST signed in the %s form', async (form) => {
    const res = await pullSync(sim, 'ACME-BOOKS-FIXED', 1000, undefined, { form });
    expect(res.status).toBe(200);
  });

  it.each([
    ['example', false],
    ['example', true],
    ['formula', false],
    ['formula', true],
  ] as const)('GET in the %s form, payload part omitted: %s', async (form, omitPayload) => {
    const res = await call(sim, { method: 'GET', path: '/partners/v1/balance', form, omitPayload });
    expect(res.status).toBe(200);
  });

  it('the URL is http://<Host header><path as received>', async () => {
    const res = await call(sim, {
      method: 'GET',
      path: '/partners/v1/gift_cards/ACME-BOOKS-FIXED',
      headers: { host: 'partner.local:4010' },
      signedUrl: 'http://partner.local:4010/partners/v1/gift_cards/ACME-BOOKS-FIXED',
    });
    expect(res.status).toBe(200);
  });

  it('SIM_PUBLIC_BASE_URL is accepted as the URL base too', async () => {
    const behindProxy = await startSimulator({ SIM_PUBLIC_BASE_URL: 'https://partner.example.com' });
    try {
      const res = await call(behindProxy, {
        method: 'GET',
        path: '/partners/v1/balance',
        signedUrl: 'https://partner.example.com/partners/v1/balance',
      });
      expect(res.status).toBe(200);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('Failures: 401 unauthorized (credentials) and 401 invalid_signature (request does not match)', () => {
  const balance = '/partners/v1/balance';

  it('missing Authorization header -> unauthorized', async () => {
    expect(await call(sim, { method: 'GET', path: balance, authorization: null })).toMatchObject(
      ENVELOPE(401, 'unauthorized', 'unauthorized'),
    );
  });

  it('malformed Authorization header -> unauthorized', async () => {
    const res = await call(sim, { method: 'GET', path: balance, authorization: `Bearer ${sim.config.SIM_API_KEY}` });
    expect(res).toMatchObject(ENVELOPE(401, 'unauthorized', 'unauthorized'));
  });

  it('unknown API key -> unauthorized', async () => {
    expect(await call(sim, { method: 'GET', path: balance, apiKey: 'someone-else' })).toMatchObject(
      ENVELOPE(401, 'unauthorized', 'unauthorized'),
    );
  });

  it('unknown identifier -> unauthorized', async () => {
    expect(await call(sim, { method: 'GET', path: balance, identifier: 'someone-else' })).toMatchObject(
      ENVELOPE(401, 'unauthorized', 'unauthorized'),
    );
  });

  it.each([
    ['stale', -1],
    ['future', 1],
  ])('%s timestamp outside SIM_TIMESTAMP_WINDOW_S -> unauthorized, naming the window', async (_what, sign) => {
    const window = sim.config.SIM_TIMESTAMP_WINDOW_S;
    const timestamp = Math.floor(Date.now() / 1000) + sign * (window + 30);
    const res = await call(sim, { method: 'GET', path: balance, timestamp });
    expect(res).toMatchObject(ENVELOPE(401, 'unauthorized', 'unauthorized'));
    expect(res.body.errors[0].message).toContain(`${window} seconds`);
  });

  it('a timestamp inside the window is accepted', async () => {
    const timestamp = Math.floor(Date.now() / 1000) - sim.config.SIM_TIMESTAMP_WINDOW_S + 30;
    expect((await call(sim, { method: 'GET', path: balance, timestamp })).status).toBe(200);
  });

  it('signed with another shared key -> invalid_signature', async () => {
    expect(await call(sim, { method: 'GET', path: balance, sharedKeyHex: OTHER_KEY })).toMatchObject(
      ENVELOPE(401, 'invalid_signature', 'unauthorized'),
    );
  });

  it('tampered body -> invalid_signature, and no card is issued', async () => {
    const res = await call(sim, {
      method: 'POST',
      path: '/partners/v1/cards',
      signedBody: { card: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 } },
      body: { card: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 10000 } },
    });
    expect(res).toMatchObject(ENVELOPE(401, 'invalid_signature', 'unauthorized'));
    expect((await sim.control.ledger()).cards).toEqual([]);
  });

  it('a payload whose keys are not sorted -> invalid_signature', async () => {
    const raw = '{"card":{"gift_card_code":"ACME-BOOKS-FIXED","amount":1000}}';
    // rawBody is signed as sent (lowercased, unsorted); the simulator signs the canonical form.
    const res = await call(sim, { method: 'POST', path: '/partners/v1/cards', rawBody: raw });
    expect(res).toMatchObject(ENVELOPE(401, 'invalid_signature', 'unauthorized'));
  });

  it('a signature of another path -> invalid_signature', async () => {
    const res = await call(sim, { method: 'GET', path: balance, signedUrl: `${sim.baseUrl}/partners/v1/gift_cards` });
    expect(res).toMatchObject(ENVELOPE(401, 'invalid_signature', 'unauthorized'));
  });

  it('a signature of another verb -> invalid_signature', async () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const token = tokenOf({ verb: 'POST', url: `${sim.baseUrl}${balance}`, payload: '', identifier: 'sim-identifier', timestamp });
    const authorization = authorizationOf(sim.config.SIM_API_KEY, 'sim-identifier', hmacHexOf(DEV_KEY, token), timestamp);
    expect(await call(sim, { method: 'GET', path: balance, authorization })).toMatchObject(
      ENVELOPE(401, 'invalid_signature', 'unauthorized'),
    );
  });

  it('every endpoint requires the header (checked before anything else, e.g. an unknown gift card)', async () => {
    for (const path of ['/partners/v1/gift_cards', '/partners/v1/gift_cards/NOPE', '/partners/v1/inventories/NOPE', '/partners/v1/cards/x', '/partners/v1/pull_requests/x']) {
      expect((await call(sim, { method: 'GET', path, authorization: null })).status).toBe(401);
    }
    for (const path of ['/partners/v1/cards', '/partners/v1/pull_requests']) {
      expect((await call(sim, { method: 'POST', path, body: {}, authorization: null })).status).toBe(401);
    }
  });
});
