import { Client } from 'pg';
import { spawnApp, spawnWorker, stopAllProcesses, type AppProcess } from '../support/processes';
import { KEYS, idemKey, useStack } from '../support/stack';
import { GIFT_CARD, pidOfActor, waitForAllEnded, withDb } from '../recovery/support/recovery';

const TASKS = ['sweep', 'reconciliation', 'balance watch check', 'catalog refresh'] as const;
/** Tasks with nothing to do here (the circuit is closed, no bulk action runs): an idle tick claims nothing. */
const IDLE_TASKS = ['circuit probe', 'bulk actions'] as const;
/** Every task's interval here (the smallest the settings allow for reconciliation, catalog and balance: 1 s). */
const INTERVAL_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 13, item 3: 2 API and 3 worker processes against one database and one Redis. Orders spread over
 * both APIs and all complete; an idempotent replay on either API answers the same order; every periodic
 * task runs once per interval across the fleet, not once per process (counted in periodic_task_runs),
 * and a run held by a process that died is taken over once its lease is over.
 */
describe('a fleet: 2 APIs and 3 workers on one Postgres and one Redis', () => {
  const stack = useStack({
    worker: false,
    env: {
      SWEEP_INTERVAL_MS: String(INTERVAL_MS),
      RECONCILE_INTERVAL_MS: String(INTERVAL_MS),
      CIRCUIT_PROBE_INTERVAL_MS: String(INTERVAL_MS),
      BALANCE_WATCH_INTERVAL_MS: String(INTERVAL_MS),
      CATALOG_REFRESH_INTERVAL_MS: String(INTERVAL_MS),
      PERIODIC_TASK_LEASE_MS: '3000',
    },
    beforeClose: stopAllProcesses,
  });
  let apis: { proc: AppProcess; url: string }[] = [];
  let workers: AppProcess[] = [];

  beforeAll(async () => {
    const procs = [1, 2].map((n) => spawnApp('api', { ...stack.env, PORT: '0' }, { label: `api ${n}` }));
    workers = [1, 2, 3].map((n) => spawnWorker(stack.env, { label: `worker ${n}` }));
    await Promise.all([...procs, ...workers].map((p) => p.ready()));
    apis = await Promise.all(procs.map(async (proc) => ({ proc, url: /listening on (http:\/\/\S+)/.exec(await proc.waitForLog(/listening on/))![1]! })));
  }, 60_000);

  const post = async (url: string, key: string, body: object) => {
    const res = await fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.shop}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { order: { id: string } } };
  };

  it('orders spread over both APIs all complete, and a replay of each on the other API answers the same order', async () => {
    const body = { gift_card_code: GIFT_CARD, amount: 1000, mode: 'sync' };
    const keys = Array.from({ length: 40 }, () => idemKey('fleet'));
    const placed = await Promise.all(keys.map((k, i) => post(apis[i % 2]!.url, k, body)));
    expect(placed.map((p) => p.status)).toEqual(Array(40).fill(202));
    const ended = await waitForAllEnded(stack, placed.map((p) => p.body.order.id), 60_000);
    expect(ended.filter((o) => o.status !== 'completed')).toEqual([]);

    const replays = await Promise.all(keys.map((k, i) => post(apis[(i + 1) % 2]!.url, k, body)));
    expect(replays.map((r) => r.body.order.id)).toEqual(placed.map((p) => p.body.order.id));
    expect(new Set(replays.map((r) => r.status))).toEqual(new Set([200]));
    // The workers shared them.
    const actors = await withDb(stack, (db) => db.query<{ actor: string }>("SELECT DISTINCT actor FROM order_timeline WHERE type = 'completed'"));
    const pids = new Set(actors.rows.map((r) => pidOfActor(r.actor)));
    expect([...pids].every((p) => workers.some((w) => w.pid === p))).toBe(true);
    expect(pids.size).toBeGreaterThanOrEqual(2);
  });

  it('each periodic task runs once per interval across the 3 workers, not three times; an idle one claims nothing', async () => {
    const runs = async () => {
      const { rows } = await withDb(stack, (db) => db.query<{ task: string; runs: string }>('SELECT task, runs FROM periodic_task_runs'));
      return Object.fromEntries(rows.map((r) => [r.task, Number(r.runs)]));
    };
    const before = await runs();
    const started = Date.now();
    await sleep(8_000);
    const after = await runs();
    const seconds = (Date.now() - started) / 1000;
    const counted = Object.fromEntries(TASKS.map((t) => [t, (after[t] ?? 0) - (before[t] ?? 0)]));
    // At most one run per 0.9 interval (the timers are not in step), and one more at the edges; three
    // processes each running every task would have made about 3 x 8. At least one: the task runs at all (a
    // count, not a rate: a loaded machine's timers only come later).
    const most = Math.floor(seconds / 0.9) + 1;
    for (const t of TASKS) expect({ t, runs: counted[t], ok: counted[t]! >= 1 && counted[t]! <= most }).toEqual({ t, runs: counted[t], ok: true });
    // A tick that reads it has nothing to do writes nothing: no claim, no release (two commits a tick).
    expect(Object.fromEntries(IDLE_TASKS.map((t) => [t, (after[t] ?? 0) - (before[t] ?? 0)]))).toEqual(Object.fromEntries(IDLE_TASKS.map((t) => [t, 0])));
    // The poll ager runs in every worker on purpose (its budget is fleet-wide in Redis): it claims nothing in Postgres.
    expect(after['poll ager']).toBeUndefined();
  }, 30_000);

  it('a task held by a process that died mid-run (its lease in Postgres, no one to release it) runs again once the lease is over', async () => {
    const db = new Client({ connectionString: stack.db.url });
    await db.connect();
    try {
      // What a worker killed during a sweep leaves behind: its lease, 3 s long.
      await db.query("UPDATE periodic_task_runs SET holder = 'dead-host/1/killed', lease_until = now() + interval '3 seconds', started_at = now(), finished_at = NULL WHERE task = 'sweep'");
      const runsOf = async () => Number((await db.query<{ runs: string }>("SELECT runs FROM periodic_task_runs WHERE task = 'sweep'")).rows[0]!.runs);
      const held = await runsOf();
      await sleep(2_000);
      expect(await runsOf()).toBe(held); // still held: nobody sweeps
      await sleep(3_000);
      const { rows } = await db.query<{ runs: string; holder: string }>("SELECT runs, holder FROM periodic_task_runs WHERE task = 'sweep'");
      expect(Number(rows[0]!.runs)).toBeGreaterThan(held);
      expect(rows[0]!.holder).not.toBe('dead-host/1/killed');
    } finally {
      await db.end();
    }
  }, 30_000);
});
