import { FairShare } from './fair-share';

/** The priorities that share the partner between clients (lower goes first). */
describe('FairShare', () => {
  it("a client's first order goes first; a bulk import's later orders go after another client's first ones, in their own order", () => {
    let now = 1_000_000;
    const fair = new FairShare(() => now);
    const bulk = Array.from({ length: 10_000 }, () => fair.next('bulk'));
    expect(bulk.slice(0, 4)).toEqual([1, 2, 2, 3]);
    expect(bulk[9_999]).toBe(14);
    // Never decreasing during the burst: the bulk client's orders keep their order.
    expect(bulk.every((p, i) => i === 0 || p >= bulk[i - 1]!)).toBe(true);
    const checkout = Array.from({ length: 50 }, () => fair.next('checkout'));
    expect(Math.max(...checkout)).toBe(6);
    // 6 < 14: the checkout's 50 go before the bulk import's last 9,000 or so.
    expect(bulk.filter((p) => p <= 6).length).toBeLessThan(64);
    // A minute later the bulk client is counted afresh.
    now += 61_000;
    expect(fair.next('bulk')).toBe(1);
  });

  it('priorities stay under the background steps (polls, re-checks) whatever the volume', () => {
    const fair = new FairShare(() => 0);
    let last = 0;
    for (let i = 0; i < 100_000; i++) last = fair.next('huge');
    expect(last).toBeLessThanOrEqual(FairShare.MAX);
  });

  it('a client of weight 4 (CLIENT_WEIGHTS) sends four times as many orders as a client of weight 1 at each priority', () => {
    const fair = new FairShare(() => 0, new Map([['checkout', 4]]));
    const checkout = Array.from({ length: 400 }, () => fair.next('checkout'));
    const plain = Array.from({ length: 100 }, () => fair.next('bulk'));
    for (const p of [1, 2, 3, 4, 5, 6]) {
      const ofCheckout = checkout.filter((x) => x === p).length;
      const ofPlain = plain.filter((x) => x === p).length;
      expect({ p, ofCheckout }).toEqual({ p, ofCheckout: 4 * ofPlain });
    }
    // A weight below 1 makes a client's orders go later sooner.
    const light = new FairShare(() => 0, new Map([['batch', 0.5]]));
    expect(Array.from({ length: 4 }, () => light.next('batch'))).toEqual([1, 2, 3, 3]);
  });
});
