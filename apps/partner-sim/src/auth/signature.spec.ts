import { createHmac } from 'node:crypto';
import { loadSimConfig } from '@cardpull/config';
import type { ParsedBody } from '../common/request-context';
import { verifySignature, type SignedRequest } from './signature';

const config = loadSimConfig({ SIM_TIMESTAMP_WINDOW_S: '60' });
const NOW_S = 1_800_000_000;
const sign = (token: string) => createHmac('sha256', Buffer.from(config.SIM_SHARED_KEY, 'hex')).update(token).digest('hex');
const header = (signature: string, ts = NOW_S) =>
  `Bearer ${config.SIM_API_KEY}, Id=${config.SIM_IDENTIFIER}, Signature=${signature}, Timestamp=${ts}`;
const get = (authorization: string): SignedRequest => ({
  method: 'GET',
  path: '/partners/v1/balance',
  host: 'sim:4010',
  authorization,
  body: { kind: 'none' },
});
const verify = (req: SignedRequest) => verifySignature(config, req, NOW_S * 1000)?.code ?? 'ok';

describe('verifySignature: the spec Authentication rules', () => {
  it.each([
    ['example, empty payload kept', `GET+http://sim:4010/partners/v1/balance++${config.SIM_IDENTIFIER}+${NOW_S}`],
    ['example, payload omitted', `GET+http://sim:4010/partners/v1/balance+${config.SIM_IDENTIFIER}+${NOW_S}`],
    ['formula, empty payload kept', `GET+http://sim:4010/partners/v1/balance++${NOW_S}`],
    ['formula, payload omitted', `GET+http://sim:4010/partners/v1/balance+${NOW_S}`],
  ])('GET accepted: %s', (_form, token) => {
    expect(verify(get(header(sign(token))))).toBe('ok');
  });

  it('POST signs the canonical, lowercased body; a body that is not JSON is signed as its lowercased text', () => {
    const json: ParsedBody = { kind: 'json', value: { card: { gift_card_code: 'ACME', amount: 1 } } };
    const token = `POST+http://sim:4010/partners/v1/cards+{"card":{"amount":1,"gift_card_code":"acme"}}+${NOW_S}`;
    const post = { ...get(header(sign(token))), method: 'POST', path: '/partners/v1/cards', body: json };
    expect(verify(post)).toBe('ok');
    const raw: ParsedBody = { kind: 'invalid', raw: '{NOT JSON' };
    const rawToken = `POST+http://sim:4010/partners/v1/cards+{not json+${NOW_S}`;
    expect(verify({ ...post, authorization: header(sign(rawToken)), body: raw })).toBe('ok');
  });

  it('the timestamp window is inclusive', () => {
    const at = (ts: number) => header(sign(`GET+http://sim:4010/partners/v1/balance++${ts}`), ts);
    expect(verify(get(at(NOW_S - 60)))).toBe('ok');
    expect(verify(get(at(NOW_S + 60)))).toBe('ok');
    expect(verify(get(at(NOW_S - 61)))).toBe('unauthorized');
  });

  it('a Timestamp outside the window is answered with the stale-Timestamp code (SIM_STALE_TIMESTAMP_CODE), by the partner\'s clock', () => {
    const at = (ts: number) => get(header(sign(`GET+http://sim:4010/partners/v1/balance++${ts}`), ts));
    const partnerAhead = (NOW_S + 120) * 1000;
    const hostile = { windowS: 30, staleCode: 'invalid_signature' as const };
    expect(verifySignature(config, at(NOW_S), partnerAhead, hostile)?.code).toBe('invalid_signature');
    expect(verifySignature(config, at(NOW_S + 100), partnerAhead, hostile)).toBeNull();
    expect(verifySignature(config, at(NOW_S), partnerAhead, { ...hostile, staleCode: 'unauthorized' })?.code).toBe('unauthorized');
  });

  it('credentials are checked before the signature', () => {
    const wrongKey = header('00').replace(config.SIM_API_KEY, 'other');
    expect(verify(get(wrongKey))).toBe('unauthorized');
    expect(verify(get(header('00')))).toBe('invalid_signature');
    expect(verify(get('Bearer nothing-else'))).toBe('unauthorized');
  });
});
