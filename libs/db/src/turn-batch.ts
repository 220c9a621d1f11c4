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

/** A caller waiting for its part of a batched round trip. */
export interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** Answers `waiter` with what `answer` gives, or with what it throws: no waiter is left hanging. */
export function settle<T>(waiter: Waiter<T>, answer: () => T): void {
  try {
    waiter.resolve(answer());
  } catch (error) {
    waiter.reject(error);
  }
}

/**
 * Answers every waiter of `batch` from one call for all of them (`all`, its answers in the batch's order);
 * if that call fails, from a call of each one's own (`one`), so one bad item never fails the others: only
 * the item that causes the error gets it. A batch of one goes straight to `one`.
 */
export async function allOrEach<T, R>(batch: (T & Waiter<R>)[], all: (items: T[]) => Promise<R[]>, one: (item: T) => Promise<R>): Promise<void> {
  if (batch.length > 1) {
    let answers: R[] | undefined;
    try {
      answers = await all(batch);
    } catch {
      // Each alone, below: the error that matters is the one of the item that causes it.
    }
    if (answers) {
      const given = answers;
      batch.forEach((item, i) => settle(item, () => given[i] as R));
      return;
    }
  }
  await Promise.all(batch.map((item) => one(item).then(item.resolve, item.reject)));
}
