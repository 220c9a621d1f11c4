import { randomUUID } from 'node:crypto';
import { reconciliationReport } from '../../apps/worker/src/commands/reconciliation-report';
import { PartnerClient } from '@cardpull/partner-client';
import { testPool, waitFor } from '@cardpull/testing';
import { insertOrder, useStack } from '../support/stack';

/**
 * `npm run reconcile:report -- --verify` asks the partner about every request ID that did not bring its
 * card, the failed ones included, and about every stored card, surplus ones included: a card the partner
 * holds for one of our failed request IDs is a lost card, and is flagged.
 */
describe('the reconciliation report checks failed and surplus attempts against the partner', () => {
  const stack = useStack({ worker: false });

  it('flags a card the partner holds for a failed request ID (partner_has_card) and lists a surplus card, verified', async () => {
    const { id, requestId: failedId } = await insertOrder(stack, { giftCardCode: 'FAST-FREE', amount: 4400, mode: 'async' });
    const ownId = randomUUID();
    const surplusId = randomUUID();
    const pool = testPool(stack.db.url, 2);
    const partner = new PartnerClient({ baseUrl: stack.sim.baseUrl, apiKey: stack.sim.config.SIM_API_KEY, identifier: stack.sim.config.SIM_IDENTIFIER, sharedKeyHex: stack.sim.config.SIM_SHARED_KEY, signatureForm: 'example', timeoutMs: 2000 });
    try {
      // The order's story as a wrong inference would leave it: its first ID declared dead although the
      // partner went on with it, a second one that brought the order's card, a third that brought a surplus.
      await pool.query(
        `UPDATE attempts SET state = 'failed_definitive', partner_status = 'exists', error_code = 'used_without_pull_request' WHERE request_id = $1;`,
        [failedId],
      );
      for (const [seq, requestId] of [[2, ownId], [3, surplusId]] as const) {
        await pool.query(`INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at) VALUES ($1, $2, $3, 'async', 'succeeded', now(), now())`, [requestId, id, seq]);
      }
      for (const requestId of [failedId, ownId, surplusId]) {
        const created = await stack.sim.request({ method: 'POST', path: '/partners/v1/pull_requests', body: { pull_request: { amount: 4400, gift_card_code: 'FAST-FREE', request_id: requestId } } });
        expect(created.status).toBe(200);
      }
      const cards = await waitFor('the partner to issue the three cards', async () => {
        const issued = (await stack.sim.control.ledger()).cards;
        const of = (r: string) => issued.find((c) => c.request_id === r);
        return of(failedId) && of(ownId) && of(surplusId) ? { failed: of(failedId)!, own: of(ownId)!, surplus: of(surplusId)! } : null;
      }, 10_000);
      const store = async (requestId: string, partnerCardId: string, role: string) =>
        (await pool.query(
          `INSERT INTO cards (id, order_id, request_id, partner_card_id, key_id, code_enc, amount, gift_card_code, role)
           VALUES ($1, $2, $3, $4, 'k', '\\x00', 4400, 'FAST-FREE', $5) RETURNING id`,
          [randomUUID(), id, requestId, partnerCardId, role],
        )).rows[0].id as string;
      const own = await store(ownId, cards.own.id, 'order');
      await store(surplusId, cards.surplus.id, 'surplus');
      await pool.query(`UPDATE orders SET status = 'completed', card_id = $2, completed_at = now(), next_step = NULL, next_step_at = NULL WHERE id = $1`, [id, own]);

      const [row] = (await reconciliationReport(pool, new Date(Date.now() - 3_600_000), new Date(Date.now() + 1_000), partner)).filter((r) => r.order_id === id);
      expect(row).toMatchObject({ status: 'completed', card_id: cards.own.id, other_cards: [`surplus:${cards.surplus.id}@${surplusId}`] });
      expect(row!.flags).toEqual(expect.arrayContaining([`partner_has_card:${failedId}`, `surplus_card:${surplusId}`]));
      // Both stored cards were found at the partner as stored.
      expect(row!.flags.filter((f) => f.startsWith('partner_card_'))).toEqual([]);
    } finally {
      await pool.end();
      await partner.close();
    }
  });
});
