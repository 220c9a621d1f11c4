import { waitFor } from '@cardpull/testing';
import { spawnWorker, stopAllProcesses, type AppProcess } from '../support/processes';
import { useStack } from '../support/stack';
import {
  GIFT_CARD,
  cardsOf,
  dbPicture,
  ms,
  pidOfActor,
  placeOrder,
  postsOf,
  summary,
  waitForCompleted,
  withDb,
} from './support/recovery';

/**
 * Two worker processes run; the one holding an order's lease (orders.lease_owner names its pid) is
 * SIGKILLed in the middle of its partner call. Nothing tells the survivor: BullMQ notices the dead job
 * once its lock (WORKER_LOCK_MS) has expired, at a stalled check (every WORKER_STALLED_INTERVAL_MS), and
 * the survivor may only take the order over once the dead worker's lease (ORDER_LEASE_MS after its last
 * renewal: a dead worker renews nothing) has run out. So the step must resume, with the same request ID,
 * after the dead lease's end, on the survivor. How soon (at most WORKER_LOCK_MS + WORKER_STALLED_INTERVAL_MS
 * + ORDER_LEASE_MS after the kill) is printed here and measured by `npm run bench -- recovery`, not
 * asserted: a loaded machine only makes it later.
 */
describe('Invariants 4 and 5: a killed worker\'s leased step resumes on another worker once its lease is over', () => {
  const stack = useStack({ worker: false, beforeClose: stopAllProcesses });
  let workers: AppProcess[];

  it.each([
    ['sync', 'cards'],
    ['async', 'pull_requests'],
  ] as const)('%s order: the survivor picks the step up and completes it with the same request ID', async (mode, endpoint) => {
    workers = [spawnWorker(stack.env, { label: `worker A (${mode})` }), spawnWorker(stack.env, { label: `worker B (${mode})` })];
    await Promise.all(workers.map((w) => w.ready()));
    const { WORKER_LOCK_MS, WORKER_STALLED_INTERVAL_MS, ORDER_LEASE_MS } = stack.config;
    const bound = WORKER_LOCK_MS + WORKER_STALLED_INTERVAL_MS + ORDER_LEASE_MS;

    await stack.sim.control.addFault({ endpoint, mode: 'hang', gift_card_codes: [GIFT_CARD], times: 1 });
    const order = await placeOrder(stack, mode);
    const requestId = order.attempts[0]!.request_id;
    // Mid-call: the POST has reached the partner and a live lease names its holder.
    const holderPid = await waitFor('the POST to reach the partner while a worker holds the lease', async () => {
      if (!postsOf(await stack.sim.control.ledger(), requestId).length) return null;
      const { rows } = await withDb(stack, (db) => db.query('SELECT lease_owner FROM orders WHERE id = $1 AND lease_expires_at > now()', [order.id]));
      return pidOfActor(rows[0]?.lease_owner ?? null);
    }, 10_000, 10);
    const victim = workers.find((w) => w.pid === holderPid)!;
    const survivor = workers.find((w) => w.pid !== holderPid)!;
    expect(victim).toBeDefined();
    victim.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;
    // The dead worker's lease as it left it (nobody renews it any more).
    const deadLease = await withDb(stack, async (db) => (await db.query<{ lease_owner: string; lease_expires_at: Date }>('SELECT lease_owner, lease_expires_at FROM orders WHERE id = $1', [order.id])).rows[0]!);

    // Resumed: the next partner request carrying the request ID (a sync retry, or an async poll).
    const resumed = await waitFor('the step to resume', async () => {
      const ledger = await stack.sim.control.ledger();
      return ledger.requests.find((r) => r.request_id === requestId && Date.parse(r.at) > killedAt);
    }, 15_000, 20);
    const resumedAfter = Date.parse(resumed.at) - killedAt;
    const done = await waitForCompleted(stack, order.id, 15_000);
    const completedAfter = Date.now() - killedAt;

    summary(`killed lease holder resumes (${mode})`, {
      resumed_after_kill: ms(resumedAfter),
      completed_after_kill: ms(completedAfter),
      bound: ms(bound),
      lock: ms(WORKER_LOCK_MS),
      stalled_interval: ms(WORKER_STALLED_INTERVAL_MS),
      lease: ms(ORDER_LEASE_MS),
      dead_lease_left_after_kill: ms(deadLease.lease_expires_at.getTime() - killedAt),
      resumed_with: `${resumed.method} ${resumed.path.replace(requestId, ':request_id')}`,
    });

    // Resumed by the survivor, with the same request ID, and the card issued to the dead worker's call kept.
    const db = await dbPicture(stack);
    const events = db.events.filter((e) => e.order_id === order.id);
    // Taken over only once the dead worker's lease was over (both times by the database's clock).
    expect(pidOfActor(deadLease.lease_owner)).toBe(victim.pid);
    const takenOver = await withDb(stack, async (d) => (await d.query<{ at: Date }>(`SELECT min(at) AS at FROM order_events WHERE order_id = $1 AND type = 'outcome_unknown'`, [order.id])).rows[0]!.at);
    expect(takenOver.getTime()).toBeGreaterThan(deadLease.lease_expires_at.getTime());
    expect(events.filter((e) => e.type === 'outcome_unknown').map((e) => [e.detail?.reason, pidOfActor(e.actor)])).toEqual([['interrupted', survivor.pid]]);
    expect(pidOfActor(events.find((e) => e.type === 'completed')!.actor)).toBe(survivor.pid);
    expect(done.attempts.map((a) => a.request_id)).toEqual([requestId]);
    const issued = cardsOf(await stack.sim.control.ledger(), requestId);
    expect(issued).toHaveLength(1);
    expect(done.card?.id).toBe(issued[0]!.id);

    await survivor.stop();
  });
});
