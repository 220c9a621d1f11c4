import { Client } from 'pg';
import { expectInvariants, waitFor } from '@cardpull/testing';
import { createOrder, useStack, waitForOrder } from '../support/stack';

/**
 * After a business error answered to the re-create of a pull request the partner never showed, the same
 * request ID is created again only once 404s are spread over PULL_REQUEST_SETTLE_MS AS THE PARTNER SAW THEM
 * (read copies may lag behind a creation). The window runs from the first 404, recorded after it came, to the
 * SENDING of the poll that decides, never to the moment its answer was processed: otherwise a slow answer
 * would count our own latency as time the partner had to show the pull request. Here every poll after the
 * first 404 is answered 2.5 s late (below the 3 s client timeout); a service that measured after the answer
 * would create again after a fraction of the window, counted at the partner. (A 404 never kills an ID: the
 * creation again carries the SAME one.)
 */
describe('the settle window of 404s is measured as the partner saw it, however slowly polls are answered', () => {
  const stack = useStack({ env: { PULL_REQUEST_SETTLE_MS: '1500', PARTNER_TIMEOUT_MS: '3000', UNKNOWN_OUTCOME_WINDOW_MS: '60000' }, beforeClose: expectInvariants });

  it('the 404s the partner answered before the same ID was created again span the whole window', async () => {
    const control = stack.sim.control;
    // The creation never reaches the partner (an error page); the re-create with the same ID is refused for stock.
    await control.addFault({ endpoint: 'pull_requests', mode: 'error_before_issue', status: 503, gift_card_codes: ['FAST-FREE'], times: 1 });
    const { id, requestId } = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 2300, mode: 'async' });
    await control.addFault({ endpoint: 'pull_requests', mode: 'error_before_issue', status: 422, error_code: 'out_of_stock', request_ids: [requestId], times: 1 });
    // Once the first 404 is recorded, every later poll of this ID is answered late.
    const pg = new Client({ connectionString: stack.db.url });
    await pg.connect();
    try {
      await waitFor('the first 404 to be recorded', async () => {
        const { rows } = await pg.query('SELECT not_found_since FROM attempts WHERE request_id = $1', [requestId]);
        return rows[0]?.not_found_since ? true : null;
      });
    } finally {
      await pg.end();
    }
    await control.addFault({ endpoint: 'pull_request_status', mode: 'latency', latency_ms: 2_500, request_ids: [requestId] });

    const order = await waitForOrder(stack, id, (o) => ['completed', 'failed', 'needs_attention'].includes(o.status), 30_000);
    expect(order.status).toBe('completed');
    expect(order.attempts).toEqual([expect.objectContaining({ request_id: requestId, state: 'succeeded' })]);
    const requests = (await control.ledger()).requests.filter((r) => r.request_id === requestId);
    const refused = requests.find((r) => r.method === 'POST' && r.status === 422)!;
    const again = requests.find((r) => r.method === 'POST' && Date.parse(r.at) > Date.parse(refused.at))!;
    const notFound = requests.filter((r) => r.method === 'GET' && r.status === 404 && r.at > refused.at && r.at < again.at).map((r) => Date.parse(r.at));
    expect(Math.max(...notFound) - Math.min(...notFound)).toBeGreaterThanOrEqual(stack.config.PULL_REQUEST_SETTLE_MS);
  });
});
