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

  it('the estimate is always the median of exactly the last readings, whatever their order, repeats and ties (the window is kept sorted in place)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const clock = new PartnerClock(() => OURS);
    const readings: number[] = [];
    const medians: [number, number][] = [];
    for (let i = 0; i < 400; i++) {
      // Whole seconds, often the same one (a Date read again), arriving anywhere within a few seconds.
      const date = dateAt(OURS + Math.floor(random() * 4) * 1_000);
      const receivedAt = OURS - Math.floor(random() * 3) * 250;
      readings.push(clock.observe(date, receivedAt)!);
      const last = readings.slice(-PARTNER_CLOCK_SAMPLES).sort((a, b) => a - b);
      const mid = last.length >> 1;
      const expected = last.length % 2 ? last[mid]! : Math.round((last[mid - 1]! + last[mid]!) / 2);
      medians.push([clock.offsetMs(), expected]);
    }
    expect(medians.filter(([got, expected]) => got !== expected)).toEqual([]);
    expect(clock.sampleCount()).toBe(PARTNER_CLOCK_SAMPLES);
  });

  it('a Date header read again is the same reading (parsed once), and a new one is parsed afresh', () => {
    const clock = new PartnerClock(() => OURS);
    expect([clock.reading(dateAt(OURS), OURS), clock.reading(dateAt(OURS), OURS + 200), clock.reading(dateAt(OURS + 1_000), OURS + 200), clock.reading('5', OURS), clock.reading(dateAt(OURS), OURS)]).toEqual([500, 300, 1_300, undefined, 500]);
  });
});
