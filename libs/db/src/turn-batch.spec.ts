import { TurnBatch } from './turn-batch';

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
