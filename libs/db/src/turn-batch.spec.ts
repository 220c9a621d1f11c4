import { TurnBatch, allOrEach, type Waiter } from './turn-batch';

const turn = () => new Promise((r) => setImmediate(r));

/**
 * TurnBatch: what arrives in one turn goes together, and while `maxInFlight` flushes are still running
 * (a slow or unreachable Redis or Postgres), what arrives meanwhile waits and goes in one batch once a
 * flush settles, instead of one more round trip per item piling onto the slow engine.
 */
describe('TurnBatch', () => {
  it('items pushed in one turn of the event loop are flushed together at its end', async () => {
    const flushed: number[][] = [];
    const batch = new TurnBatch<number>(10, async (items) => void flushed.push(items));
    batch.push(1);
    batch.push(2);
    batch.push(3);
    expect(flushed).toEqual([]);
    await turn();
    expect(flushed).toEqual([[1, 2, 3]]);
  });

  it('a full batch is flushed at once, and no batch is larger than max', async () => {
    const flushed: number[][] = [];
    const batch = new TurnBatch<number>(2, async (items) => void flushed.push(items));
    for (let i = 1; i <= 5; i++) batch.push(i);
    await turn();
    await turn();
    expect(flushed.flat()).toEqual([1, 2, 3, 4, 5]);
    expect(Math.max(...flushed.map((b) => b.length))).toBe(2);
  });

  it('while maxInFlight flushes hang, items of later turns wait and then go in one batch', async () => {
    const flushed: number[][] = [];
    const releases: Array<() => void> = [];
    const batch = new TurnBatch<number>(64, (items) => {
      flushed.push(items);
      return new Promise<void>((r) => releases.push(r));
    }, 1);
    // One item per turn, as requests arriving on separate connections do.
    for (let i = 1; i <= 6; i++) {
      batch.push(i);
      await turn();
    }
    expect(flushed).toEqual([[1]]);
    releases[0]!();
    await turn();
    expect(flushed).toEqual([[1], [2, 3, 4, 5, 6]]);
    releases[1]!();
    await turn();
    expect(flushed.length).toBe(2);
  });

  it('a flush that fails frees its slot like one that succeeds', async () => {
    const flushed: number[][] = [];
    let fail = true;
    const batch = new TurnBatch<number>(64, async (items) => {
      flushed.push(items);
      if (fail) {
        fail = false;
        throw new Error('down');
      }
    }, 1);
    batch.push(1);
    await turn();
    batch.push(2);
    await turn();
    await turn();
    expect(flushed).toEqual([[1], [2]]);
  });
});

/** allOrEach: one round trip answers a whole batch; when it fails, each item alone, so only the bad one fails. */
describe('allOrEach', () => {
  const waiters = (ids: number[]) =>
    ids.map((id) => {
      const w = { id } as { id: number; answer: Promise<string> } & Waiter<string>;
      w.answer = new Promise<string>((resolve, reject) => Object.assign(w, { resolve, reject }));
      return w;
    });

  it('one call answers every item, in the batch\'s order; no call of its own is made', async () => {
    const batch = waiters([1, 2, 3]);
    const alone: number[] = [];
    await allOrEach(batch, async (items) => items.map((i) => `all ${i.id}`), async (item) => (alone.push(item.id), `one ${item.id}`));
    expect(await Promise.all(batch.map((w) => w.answer))).toEqual(['all 1', 'all 2', 'all 3']);
    expect(alone).toEqual([]);
  });

  it('when the call for all fails, each item is asked alone: only the item that causes the error gets it', async () => {
    const batch = waiters([1, 2, 3]);
    await allOrEach(
      batch,
      async () => {
        throw new Error('the batch');
      },
      async (item) => {
        if (item.id === 2) throw new Error('item 2');
        return `one ${item.id}`;
      },
    );
    expect(await Promise.allSettled(batch.map((w) => w.answer))).toEqual([
      { status: 'fulfilled', value: 'one 1' },
      { status: 'rejected', reason: new Error('item 2') },
      { status: 'fulfilled', value: 'one 3' },
    ]);
  });

  it('a batch of one goes straight to its own call', async () => {
    const batch = waiters([7]);
    let alls = 0;
    await allOrEach(batch, async (items) => (alls++, items.map(() => 'all')), async () => 'one');
    expect([await batch[0]!.answer, alls]).toEqual(['one', 0]);
  });
});
