/**
 * Fair shares of the partner between calling clients, for the order queue's priorities: a new order's
 * first step gets a priority (BullMQ: lower goes first) that grows with how many orders its client sent
 * in the last minute: 1 for a client's first order, 2 for its second, 3 up to its fourth, ... 1 + log2(n).
 * A checkout's single order goes before a bulk import's ten-thousandth; the bulk import still gets all the
 * capacity the others leave, and its own orders keep their order (their priorities only grow during the
 * burst). A client's weight (CLIENT_WEIGHTS, 1 unless set) divides its count: a client of weight 4 sends
 * four times as many orders as a client of weight 1 before its orders go after the other's. Counted in
 * this process (each API process sees its share of the traffic): a heuristic for the order of work, never
 * a limit.
 *
 * What this is not: a strict round robin. A client that alone sends more than the partner's limit, for
 * minutes, keeps a lower count than a bulk import and goes first throughout; the bulk import then gets
 * what is left. Round robin between clients would take a queue (or a BullMQ Pro group) per client.
 */
export class FairShare {
  /** Per client, the count of orders per second of the last WINDOW_S seconds (see Counts). */
  private readonly seconds = new Map<string, Counts>();
  private static readonly WINDOW_S = 60;
  /** Priorities stay under the background steps' (polls and re-checks: see order-queue.service.ts). */
  static readonly MAX = 64;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly weights: ReadonlyMap<string, number> = new Map(),
  ) {}

  /** The priority of one more order of `client`, counting it. */
  next(client: string): number {
    const second = Math.floor(this.now() / 1000);
    let counts = this.seconds.get(client);
    if (!counts) this.seconds.set(client, (counts = { perSecond: new Map(), second: Number.NaN, earlier: 0 }));
    // The window's earlier seconds are summed (and the ones past it forgotten) once per second, not per order.
    if (counts.second !== second) {
      let earlier = 0;
      for (const [s, n] of counts.perSecond) {
        if (s <= second - FairShare.WINDOW_S) counts.perSecond.delete(s);
        else if (s !== second) earlier += n;
      }
      counts.second = second;
      counts.earlier = earlier;
    }
    const current = counts.perSecond.get(second) ?? 0;
    const recent = counts.earlier + current;
    counts.perSecond.set(second, current + 1);
    if (this.seconds.size > 10_000) this.forgetIdle(second);
    const weight = this.weights.get(client) ?? 1;
    return Math.min(FairShare.MAX, 1 + Math.floor(Math.log2(recent / weight + 1)));
  }

  private forgetIdle(second: number): void {
    for (const [client, counts] of this.seconds) {
      if (![...counts.perSecond.keys()].some((s) => s > second - FairShare.WINDOW_S)) this.seconds.delete(client);
    }
  }
}

/** A client's counts: per second, and the sum of the window's seconds before `second` (the last second counted in). */
interface Counts {
  perSecond: Map<number, number>;
  second: number;
  earlier: number;
}
