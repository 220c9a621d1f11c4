import { startSimulator, useSimulator } from '../support/simulator';
import { call, ENVELOPE, get, pullSync } from './support/partner';

const sim = useSimulator();
const balance = '/partners/v1/balance';
const nowS = () => Math.floor(Date.now() / 1000);
/** The answer's Date header minus our clock, in seconds (the header has 1 s resolution). */
const dateAhead = (headers: Record<string, unknown>) => (Date.parse(String(headers.date)) - Date.now()) / 1000;

/**
 * The "clock ahead of ours, with a skew window" reading (SIM_CLOCK_OFFSET_S, SIM_TIMESTAMP_WINDOW_S,
 * SIM_STALE_TIMESTAMP_CODE; PUT /_sim/clock at run time): the partner checks a request's Timestamp against
 * its own clock, says that clock in the Date header of every answer, and may answer a stale Timestamp with
 * `invalid_signature` (the hostile reading) instead of `unauthorized`.
 */
describe('simulator clock reading: an offset clock, a skew window, a selectable stale-Timestamp code', () => {
  it('by default (offset 0): every answer carries a Date header by our clock, partner calls and control calls alike', async () => {
    expect(await sim.control.clock()).toMatchObject({ offset_s: 0, window_s: 300, stale_timestamp_code: 'unauthorized' });
    const ok = await get(sim, balance);
    const refused = await call(sim, { method: 'GET', path: balance, timestamp: nowS() - 400 });
    expect([ok.status, refused.status]).toEqual([200, 401]);
    expect(refused).toMatchObject(ENVELOPE(401, 'unauthorized', 'unauthorized'));
    for (const res of [ok, refused]) expect(Math.abs(dateAhead(res.headers))).toBeLessThanOrEqual(1.5);
  });

  it('offset +120 s, window 30 s, code invalid_signature: a call signed with our clock is refused invalid_signature, its Date 120 s ahead', async () => {
    const clock = await sim.control.setClock({ offset_s: 120, window_s: 30, stale_timestamp_code: 'invalid_signature' });
    expect(clock).toMatchObject({ offset_s: 120, window_s: 30, stale_timestamp_code: 'invalid_signature' });
    const refused = await pullSync(sim, 'FAST-FREE', 100, 'clock-ours');
    expect(refused).toMatchObject(ENVELOPE(401, 'invalid_signature', 'unauthorized'));
    expect(dateAhead(refused.headers)).toBeGreaterThanOrEqual(118.5);
    expect(dateAhead(refused.headers)).toBeLessThanOrEqual(121);
    // Signed with the partner's time (our clock + 120 s, within its 30 s window): accepted, a card.
    const accepted = await pullSync(sim, 'FAST-FREE', 100, 'clock-theirs', { timestamp: nowS() + 115 });
    expect(accepted.status).toBe(200);
    expect(dateAhead(accepted.headers)).toBeGreaterThanOrEqual(118.5);
    const ledger = await sim.control.ledger();
    expect(ledger.requests.map((r) => [r.request_id, r.status, r.auth])).toEqual([
      ['clock-ours', 401, 'invalid_signature'],
      ['clock-theirs', 200, 'ok'],
    ]);
    expect(ledger.cards.map((c) => c.request_id)).toEqual(['clock-theirs']);
  });

  it('the window is the partner\'s: 31 s away is refused, 29 s away accepted; unauthorized when that code is chosen', async () => {
    await sim.control.setClock({ offset_s: -60, window_s: 30 });
    expect((await call(sim, { method: 'GET', path: balance, timestamp: nowS() - 60 - 29 })).status).toBe(200);
    expect(await call(sim, { method: 'GET', path: balance, timestamp: nowS() - 60 + 31 })).toMatchObject(ENVELOPE(401, 'unauthorized', 'unauthorized'));
  });

  it('a Retry-After HTTP date is by the partner\'s clock too (read against its Date header, it asks for the seconds it says)', async () => {
    await sim.control.setClock({ offset_s: 120, window_s: 300 });
    await sim.control.addFault({ endpoint: 'any', mode: 'rate_limited', retry_after_s: 7, retry_after_format: 'http_date', times: 1 });
    const res = await get(sim, balance);
    expect(res.status).toBe(429);
    const asked = (Date.parse(String(res.headers['retry-after'])) - Date.parse(String(res.headers.date))) / 1000;
    expect(asked).toBeGreaterThanOrEqual(6);
    expect(asked).toBeLessThanOrEqual(7);
  });

  it('POST /_sim/reset restores the clock of the settings; nonsense is answered 400', async () => {
    await sim.control.setClock({ offset_s: 120, window_s: 30, stale_timestamp_code: 'invalid_signature' });
    await sim.control.reset();
    expect(await sim.control.clock()).toMatchObject({ offset_s: 0, window_s: 300, stale_timestamp_code: 'unauthorized' });
    await expect(sim.control.setClock({ stale_timestamp_code: 'teapot' as never })).rejects.toThrow(/400/);
    await expect(sim.control.setClock({ window_s: 0 })).rejects.toThrow(/400/);
  });

  it('the settings (SIM_CLOCK_OFFSET_S, SIM_TIMESTAMP_WINDOW_S, SIM_STALE_TIMESTAMP_CODE) start the simulator with that clock', async () => {
    const ahead = await startSimulator({ SIM_CLOCK_OFFSET_S: '120', SIM_TIMESTAMP_WINDOW_S: '30', SIM_STALE_TIMESTAMP_CODE: 'invalid_signature' });
    try {
      expect(await ahead.control.clock()).toMatchObject({ offset_s: 120, window_s: 30, stale_timestamp_code: 'invalid_signature' });
      const refused = await get(ahead, balance);
      expect(refused).toMatchObject(ENVELOPE(401, 'invalid_signature', 'unauthorized'));
      expect(dateAhead(refused.headers)).toBeGreaterThanOrEqual(118.5);
    } finally {
      await ahead.close();
    }
  });
});
