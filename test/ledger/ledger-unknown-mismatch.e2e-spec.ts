import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createPgPool } from '@cardpull/db';
import { TransitionsRepository } from '@cardpull/orders';
import { checkLedger } from '@cardpull/testing';
import { createOrder, useStack } from '../support/stack';

/**
 * A hole the ledger check found (test/money-safety/partner-word.e2e-spec.ts, now and then under load): a card
 * shown under another request ID than the one asked is stored as a mismatch and leaves ours open, as
 * `unknown`. The store moved the attempt's state alone: the ledger put the order's money in in_doubt (the
 * state's trigger), while the ID's unknown-outcome window (unknown_since) never started, so the service's
 * other readers of "an ID of unknown outcome" (the money-in-doubt figures, the reconciliation checks) did
 * not count it. The store now starts the window, as every move to unknown does. Played through both forms of
 * the statement: named (straight to Postgres) and its server-side function (behind a transaction pooler).
 */
describe('the ledger: a card under another request ID leaves ours unknown, with its unknown-outcome window started', () => {
  const stack = useStack({ worker: false, beforeClose: () => pg.end() });
  let pg: Client;
  beforeAll(async () => {
    pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
  });

  it.each([
    ['named statements', true],
    ['server-side functions (behind a transaction pooler)', false],
  ])('through %s: the attempt is unknown with unknown_since set, the money in in_doubt, and the ledger agrees with the orders', async (_label, preparedStatements) => {
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'NOVA-GAMES-FREE', amount: 2000, mode: 'async' });
    // The ID was sent (a pull request created), no unknown outcome yet.
    await pg.query(`UPDATE attempts SET state = 'sent', call_count = 1, first_sent_at = now(), last_sent_at = now() WHERE request_id = $1`, [requestId]);
    const pool = createPgPool(stack.db.url, 1, { preparedStatements });
    try {
      const stored = await new TransitionsRepository(pool).storeCard(
        id,
        {
          id: randomUUID(), requestId, partnerCardId: `other-${randomUUID()}`, keyId: 'k1', codeEnc: Buffer.from('sealed'), pinEnc: null,
          expireAt: null, amount: 2000, giftCardCode: 'NOVA-GAMES-FREE', pdfEnc: null,
        },
        `shown under request ID another-id instead of ${requestId}`,
        { state: 'unknown' },
        'worker:test',
      );
      expect(stored).toMatchObject({ role: 'mismatch', status: 'needs_attention' });
    } finally {
      await pool.end();
    }
    const { rows } = await pg.query(`SELECT state, unknown_since IS NOT NULL AS window_started FROM attempts WHERE request_id = $1`, [requestId]);
    expect(rows).toEqual([{ state: 'unknown', window_started: true }]);
    expect((await checkLedger(stack.db.url)).problems).toEqual([]);
  });
});
