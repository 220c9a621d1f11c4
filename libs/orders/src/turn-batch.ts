/**
 * Collects what is pushed during one turn of the event loop and hands it to `flush` in one go at the end
 * of that turn, or at once when `max` items wait: concurrent requests or jobs share one round trip (the
 * intake statement, the enqueue of next steps). `flush` owns the items from then on and must settle each.
 */
export class TurnBatch<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(
    private readonly max: number,
    private readonly flush: (items: T[]) => void,
  ) {}

  push(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.max) return this.drain();
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    const items = this.items;
    this.items = [];
    if (items.length) this.flush(items);
  }
}
