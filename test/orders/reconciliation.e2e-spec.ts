import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { PartnerClient } from '@cardpull/partner-client';
import { Reconciler } from '../../apps/worker/src/recovery/reconciler.service';
import { reconciliationReport, toCsv } from '../../apps/worker/src/commands/reconciliation-report';
import { expectInvariants, testPool } from '@cardpull/testing';
import { withDb } from '../recovery/support/recovery';
import { createOrder, insertOrder, useStack, waitForOrder } from '../support/stack';

describe('reconciliation: request IDs left unknown are asked until the partner answers; a report flags every mismatch', () => {
  // The window must be long enough for a healthy pull on a loaded machine, short enough to reach needs_attention quickly.
  const stack = useStack({ env: { UNKNOWN_OUTCOME_WINDOW_MS: '2500', RECONCILE_INTERVAL_MS: '3600000' }, beforeClose: expectInvariants });
  const reconciler = () => stack.worker!.get(Reconciler);

  it.each(['sync', 'async'])('a %s order in needs_attention is still asked by its own step with its SAME request ID, and completes once the partner answers', async (mode) => {
    // Every call carrying this order's request ID fails (5xx) until the fault is removed.
    await stack.stopWorker();
    const { id, requestId } = await insertOrder(stack, { giftCardCode: 'NOVA-GAMES-FREE', amount: mode === 'sync' ? 1100 : 1200, mode: mode as 'sync' | 'async' });
    const faultId = await stack.sim.control.addFault({ endpoint: 'any', mode: 'error_before_issue', status: 503, request_ids: [requestId] });
    await stack.startWorker();
    const stuck = await waitForOrder(stack, id);
    expect(stuck).toMatchObject({ status: 'needs_attention', error: { code: 'outcome_unknown' } });
    // Its step goes on (the reconciler has nothing to ask: no ID without a step to ask it).
    const step = await withDb(stack, async (db) => (await db.query('SELECT next_step FROM orders WHERE id = $1', [id])).rows[0].next_step);
    expect(step).toBe(mode === 'sync' ? 'sync_call' : 'async_poll');
    expect(await reconciler().reconcileOnce()).toMatchObject({ checked: 0, errors: 0 });
    await stack.sim.control.removeFault(faultId);
    const done = await waitForOrder(stack, id, (o) => o.status === 'completed', 20_000);
    expect(done.attempts.map((a: any) => a.request_id)).toEqual([requestId]);
    expect((await stack.sim.control.ledger()).cards.filter((c) => c.request_id === requestId)).toHaveLength(1);
  });

  it('the report lists orders with request IDs, outcomes and card ids (JSON and CSV) and flags a mismatch', async () => {
    const ok = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 });
    const broken = await createOrder(stack, { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 });
    await waitForOrder(stack, ok.id);
    await waitForOrder(stack, broken.id);
    const pool = testPool(stack.db.url, 2);
    const db = await pool.connect();
    const partner = new PartnerClient({ baseUrl: stack.sim.baseUrl, apiKey: stack.sim.config.SIM_API_KEY, identifier: stack.sim.config.SIM_IDENTIFIER, sharedKeyHex: stack.sim.config.SIM_SHARED_KEY, signatureForm: 'example', timeoutMs: 2000 });
    try {
      // A mismatch only a bug or a hand edit could cause: the card's attempt is not marked succeeded (in a
      // transaction rolled back afterwards, so the suite's own invariant check still sees it as it was).
      await db.query('BEGIN');
      await db.query(`UPDATE attempts SET state = 'unknown' WHERE request_id = $1`, [broken.requestId]);
      const rows = await reconciliationReport(db as unknown as Pool, new Date(Date.now() - 3600_000), new Date(Date.now() + 1000), partner);
      const good = rows.find((r) => r.order_id === ok.id)!;
      expect(good).toMatchObject({ status: 'completed', request_ids: [ok.requestId], attempt_states: ['succeeded'], flags: [] });
      expect(good.card_id).toEqual(expect.any(String));
      expect(rows.find((r) => r.order_id === broken.id)!.flags).toEqual(expect.arrayContaining([`card_from_an_attempt_not_succeeded:${broken.requestId}`]));
      const csv = toCsv(rows);
      expect(csv.split('\n')[0]).toBe('order_id,client,created_at,status,mode,gift_card_code,amount,request_ids,attempt_states,partner_statuses,card_id,card_request_id,other_cards,completed_at,flags');
      expect(csv).toContain(`${broken.id},shop,`);
      expect(csv).toContain('card_from_an_attempt_not_succeeded');
    } finally {
      await db.query('ROLLBACK');
      db.release();
      await pool.end();
      await partner.close();
    }
  });

  it('the command prints the report as CSV and exits 2 when something is flagged', async () => {
    // A lasting mismatch this time: an order stuck in needs_attention is flagged outcome_unknown.
    await stack.stopWorker();
    const { id, requestId } = await insertOrder(stack, { giftCardCode: 'FAST-FREE', amount: 700 });
    await stack.sim.control.addFault({ endpoint: 'cards', mode: 'error_before_issue', status: 503, request_ids: [requestId] });
    await stack.startWorker();
    await waitForOrder(stack, id);
    const entry = join(__dirname, '..', '..', 'dist', 'apps', 'worker', 'apps', 'worker', 'src', 'commands', 'reconcile-report.js');
    if (!existsSync(entry)) throw new Error('run `npm run build` first (npm test does)');
    let status = 0;
    let out = '';
    try {
      out = execFileSync(process.execPath, [entry, '--format', 'csv'], { env: { ...process.env, ...stack.env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      status = (error as { status: number }).status;
      out = (error as { stdout: string }).stdout;
    }
    expect(status).toBe(2);
    expect(out.split('\n')[0]).toMatch(/^order_id,client,/);
    expect(out).toContain(`${id},shop,`);
    expect(out).toContain('outcome_unknown');
  });
});
