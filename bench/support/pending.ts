import type { Pool } from 'pg';
import type { LedgerRequest } from '@cardpull/sim-contract';
import type { SimClient } from '../chaos/faults';
import { until } from './context';
import { createOrders } from './http-load';
import type { Log } from './report';

/**
 * Async orders that stay pending: created through the API, their pull requests created by the worker, and
 * then polled for as long as the simulator keeps them `waiting` (SIM_ASYNC_DELAY_MS of an hour).
 */

/** Async orders whose pull request the partner holds as `waiting` and whose next step is a poll. */
export async function pollingCount(db: Pool): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM orders o JOIN attempts a ON a.order_id = o.id
      WHERE o.mode = 'async' AND o.next_step = 'async_poll' AND a.partner_status = 'waiting'`,
  );
  return Number(rows[0]!.n);
}

export async function createPending(opts: { db: Pool; apiUrl: string; apiKey: string; count: number; log: Log; prefix: string }): Promise<{ createS: number; pollingS: number }> {
  const t0 = Date.now();
  await createOrders({ url: opts.apiUrl, apiKey: opts.apiKey, count: opts.count, mode: 'async', concurrency: 16, prefix: opts.prefix });
  const createS = (Date.now() - t0) / 1000;
  let last = 0;
  const ok = await until(async () => {
    last = await pollingCount(opts.db);
    return last >= opts.count;
  }, 300_000, 500);
  if (!ok) throw new Error(`only ${last} of ${opts.count} async orders reached polling within 300 s`);
  const pollingS = (Date.now() - t0) / 1000;
  opts.log(`  ${opts.count} async orders created in ${createS.toFixed(1)} s, all polling after ${pollingS.toFixed(1)} s`);
  return { createS, pollingS };
}

/** Partner requests of the simulator's ledger since `sinceMs` (GET /_sim/ledger?since=). */
export async function ledgerSince(sim: SimClient, sinceMs: number): Promise<LedgerRequest[]> {
  const view = await sim.call<{ requests: LedgerRequest[] }>('GET', `/_sim/ledger?since=${encodeURIComponent(new Date(sinceMs).toISOString())}`);
  return view.requests;
}

export const isPoll = (r: { method: string; path: string }) => r.method === 'GET' && r.path.includes('/pull_requests/');
