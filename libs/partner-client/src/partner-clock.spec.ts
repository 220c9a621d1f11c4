import { PARTNER_CLOCK_SAMPLES, PartnerClock } from './partner-clock';

const OURS = Date.parse('2027-11-22T10:00:00.000Z');
/** The Date header a partner sends at `ms` (its own time): rounded down to the second. */
const dateAt = (ms: number) => new Date(ms).toUTCString();

describe('PartnerClock: the partner\'s clock from the Date headers of its answers', () => {
  it('without any answer, or with answers without a readable Date, requests are signed with our own clock', () => {
    const clock = new PartnerClock(() => OURS);
    for (const bad of [undefined, '', 'yesterday', '5', 12345, ['nonsense']]) expect(clock.observe(bad, OURS)).toBeUndefined();
    expect([clock.offsetMs(), clock.now(), clock.sampleCount()]).toEqual([0, OURS, 0]);
  });

  it('a partner 120 s ahead: the estimate is 120 s within the Date header\'s resolution, and now() is its time', () => {
    const clock = new PartnerClock(() => OURS);
    // Answers arriving at various fractions of a second, each Date rounded down by the partner.
    for (const frac of [0, 130, 480, 620, 999]) clock.observe(dateAt(OURS + frac + 120_000), OURS + frac);
    expect(Math.abs(clock.offsetMs() - 120_000)).toBeLessThanOrEqual(500);
    expect(Math.abs(clock.now() - (OURS + 120_000))).toBeLessThanOrEqual(500);
  });

  it('an HTTP date in an array (a repeated header) is read from its first value', () => {
    const clock = new PartnerClock(() => OURS);
    expect(clock.observe([dateAt(OURS - 30_000)], OURS)).toBe(-29_500);
  });

  it('the median of the last answers: one answer held up for 20 s, or a proxy\'s own Date, does not move it', () => {
    const clock = new PartnerClock(() => OURS);
    for (let i = 0; i < 6; i++) clock.observe(dateAt(OURS + 60_000), OURS);
    clock.observe(dateAt(OURS + 40_000), OURS); // written 20 s before we read it
    clock.observe(dateAt(OURS), OURS); // a proxy with our time
    expect(clock.offsetMs()).toBe(60_500);
  });

  it(`keeps only the last ${PARTNER_CLOCK_SAMPLES} answers: a partner whose clock moved is followed once most recent answers say so`, () => {
    const clock = new PartnerClock(() => OURS);
    for (let i = 0; i < PARTNER_CLOCK_SAMPLES; i++) clock.observe(dateAt(OURS), OURS);
    for (let i = 0; i < PARTNER_CLOCK_SAMPLES >> 1; i++) clock.observe(dateAt(OURS + 90_000), OURS);
    expect(clock.offsetMs()).toBe(500);
    clock.observe(dateAt(OURS + 90_000), OURS);
    expect(clock.offsetMs()).toBe(90_500);
    expect(clock.sampleCount()).toBe(PARTNER_CLOCK_SAMPLES);
  });

  it('restartFrom: a refused signature whose Date shows the estimate wrong starts the estimate again from that answer', () => {
    const clock = new PartnerClock(() => OURS);
    for (let i = 0; i < 10; i++) clock.observe(dateAt(OURS), OURS);
    clock.restartFrom(120_500);
    expect([clock.offsetMs(), clock.sampleCount(), clock.now()]).toEqual([120_500, 1, OURS + 120_500]);
    clock.observe(dateAt(OURS + 120_000), OURS);
    expect(clock.offsetMs()).toBe(120_500);
  });

  it('follows our own clock as it moves (the offset is kept, not a fixed time)', () => {
    let ours = OURS;
    const clock = new PartnerClock(() => ours);
    clock.observe(dateAt(OURS + 10_000), OURS);
    ours += 5_000;
    expect(clock.now()).toBe(ours + 10_500);
  });
});
