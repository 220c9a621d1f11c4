import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { testPool } from '@cardpull/testing';
import { OrderReads, TransitionsRepository } from '@cardpull/orders';
import { insertOrder, useStack } from '../support/stack';

/**
 * An order is read as one picture: its row, its attempts and its cards from one snapshot. Read one after the
 * other, a card stored between the reads showed up beside a row from before it (a CI run saw an order whose
 * error code was the one its card had already replaced; a client could see its order's own card listed among
 * `other_cards` of an order still in progress). Here the card is stored exactly between the reader's first
 * statement and the rest.
 */
describe('an order is read in one snapshot: its row and its cards agree', () => {
  const stack = useStack();
  let pool: Pool;
  beforeAll(async () => {
    await stack.stopWorker();
    pool = testPool(stack.db.url, 4);
  });
  afterAll(async () => {
    await pool?.end();
  });

  it('a card stored while the order is being read is either wholly in the answer (order completed with it) or wholly absent', async () => {
    const { id, requestId } = await insertOrder(stack, { giftCardCode: 'FAST-FREE', amount: 3100, mode: 'async' });
    const transitions = new TransitionsRepository(pool);
    const partnerCardId = `read-snapshot-${randomUUID()}`;
    let between: (() => Promise<unknown>) | null = () =>
      transitions.storeCard(
        id,
        { id: randomUUID(), requestId, partnerCardId, keyId: 'test', codeEnc: Buffer.from('sealed'), pinEnc: null, expireAt: null, amount: 3100, giftCardCode: 'FAST-FREE', pdfEnc: null },
        null,
        { state: 'succeeded' },
        'test',
      );
    // The reader's pool: after its first statement returns, the card is stored (and committed) before any other runs.
    const racing = {
      query: async (...args: Parameters<Pool['query']>) => {
        const result = await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
        const run = between;
        between = null;
        if (run) await run();
        return result;
      },
    } as unknown as Pool;
    // (The card stays: this suite's database, dropped at its end, is checked against no simulator ledger.)
    const seen = (await new OrderReads(racing).detail(id))!;
    expect(between).toBeNull(); // the card was stored during the read
    expect({ status: seen.order.status, card: seen.card, otherCards: seen.otherCards }).toEqual({ status: 'pending', card: null, otherCards: [] });
    const after = (await new OrderReads(pool).detail(id))!;
    expect({ status: after.order.status, card: after.card?.partnerCardId, otherCards: after.otherCards }).toEqual({ status: 'completed', card: partnerCardId, otherCards: [] });
    expect(after.card!.codeEnc).toEqual(Buffer.from('sealed'));
    expect(after.card!.createdAt).toBeInstanceOf(Date);
    expect(after.attempts).toEqual([expect.objectContaining({ requestId, state: 'succeeded', createdAt: expect.any(Date) })]);
  });
});
