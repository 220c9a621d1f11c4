/**
 * Collects what is pushed during one turn of the event loop and hands it to `flush` in one go at the end
 * of that turn, or at once when `max` items wait: concurrent requests or jobs share one round trip (the
 * intake statement, the enqueue of next steps). `flush` owns the items from then on and must settle each.
 *
 * At most `maxInFlight` flushes run at a time (group commit). Requests arriving on separate connections
 * rarely land in the same turn; while earlier round trips are still under way, what arrives meanwhile
 * waits for one of them and then goes in one batch. Under load this gives fewer, larger round trips, and
 * a slow or unreachable engine (Redis down: each enqueue waits for its timeout) gets one pending batch per
 * slot instead of one more call per request.
 */
export class TurnBatch<T> {
  private items: T[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly max: number,
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly maxInFlight = Number.POSITIVE_INFINITY,
  ) {}

  push(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.max) return this.drain();
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (this.items.length && this.inFlight < this.maxInFlight) {
      const items = this.items.splice(0, this.max);
      this.inFlight++;
      // A failing flush must still free its slot; settling the items is the flush's own business.
      this.flush(items)
        .catch(() => undefined)
        .finally(() => {
          this.inFlight--;
          // What waited for this slot goes now: it has waited at least one round trip already.
          this.drain();
        });
    }
  }
}
