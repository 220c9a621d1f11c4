import { canonicalJson, parseAuthorization, signRequest, signaturePayload, signingToken, hmacHex } from './signature';

// Vectors computed outside this code base, with:
//   printf '%s' "$TOKEN" | openssl dgst -sha256 -mac HMAC -macopt hexkey:$KEY
const KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const URL_CARDS = 'https://partner.example.com/partners/v1/cards';
const BODY = { card: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 } };
const TS = 1_700_000_000;

describe('spec "Signature": token, payload and HMAC', () => {
  it('payload: keys sorted at every depth, no spaces, lowercased', () => {
    expect(signaturePayload(BODY)).toBe('{"card":{"amount":1000,"gift_card_code":"acme-books-fixed"}}');
    expect(canonicalJson({ b: [{ z: 1, a: 2 }], a: { d: null, c: 'X Y' } })).toBe('{"a":{"c":"X Y","d":null},"b":[{"a":2,"z":1}]}');
    expect(signaturePayload(undefined)).toBe('');
  });

  it('example form (verb+url+payload+identifier+timestamp) matches the openssl vector', () => {
    const token = signingToken({ method: 'POST', url: URL_CARDS, payload: signaturePayload(BODY), identifier: 'sim-identifier', timestamp: TS, form: 'example' });
    expect(token).toBe(`POST+${URL_CARDS}+{"card":{"amount":1000,"gift_card_code":"acme-books-fixed"}}+sim-identifier+1700000000`);
    expect(hmacHex(token, KEY)).toBe('9b2b7b038938e4a96a5a0c5c1f89a5cf3ecbf05dca907b2d097be93301cddcf7');
  });

  it('formula form (verb+url+payload+timestamp) matches the openssl vector', () => {
    const token = signingToken({ method: 'POST', url: URL_CARDS, payload: signaturePayload(BODY), identifier: 'sim-identifier', timestamp: TS, form: 'formula' });
    expect(hmacHex(token, KEY)).toBe('4046a53075a25bbc21d146e46bab5d6ac28065455c46efaaf5abdc196bf2acee');
  });

  it('GET keeps an empty payload part', () => {
    const token = signingToken({ method: 'GET', url: 'https://partner.example.com/partners/v1/balance', payload: '', identifier: 'sim-identifier', timestamp: TS, form: 'example' });
    expect(token).toBe('GET+https://partner.example.com/partners/v1/balance++sim-identifier+1700000000');
    expect(hmacHex(token, KEY)).toBe('876570a9f0be8f92db2b7a55d139daaa09433ad3ab32e35908c76212a9ae8e19');
  });

  it('the key is the hex-decoded shared key, not its text', () => {
    const token = 'GET+u++i+1';
    expect(hmacHex(token, KEY)).not.toBe(require('node:crypto').createHmac('sha256', KEY).update(token).digest('hex'));
  });

  it('the Authorization header carries api key, identifier, signature and timestamp, and parses back', () => {
    const header = signRequest({ apiKey: 'k-1', identifier: 'sim-identifier', sharedKeyHex: KEY, form: 'example' }, { method: 'POST', url: URL_CARDS, body: BODY }, () => TS * 1000);
    expect(header).toBe('Bearer k-1, Id=sim-identifier, Signature=9b2b7b038938e4a96a5a0c5c1f89a5cf3ecbf05dca907b2d097be93301cddcf7, Timestamp=1700000000');
    expect(parseAuthorization(header)).toEqual({ apiKey: 'k-1', identifier: 'sim-identifier', signature: '9b2b7b038938e4a96a5a0c5c1f89a5cf3ecbf05dca907b2d097be93301cddcf7', timestamp: '1700000000' });
    expect(parseAuthorization('Bearer k-1')).toBeNull();
    expect(parseAuthorization(undefined)).toBeNull();
  });
});
