/**
 * The intake's baseline: the same durable work as POST /v1/orders without the service around it. One
 * statement inserts the order and its attempt (one transaction, one round trip), then a BullMQ add with
 * the fixed job id, on a pool of the service's size. No HTTP, no validation, no order event.
 *
 * Closed loop (RATE=0): CONCURRENCY loops for SECONDS after WARMUP_SECONDS. Paced (RATE>0): evenly spaced
 * starts, latency counted from when each was due. Prints one JSON line.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { uuidv7 } from '@cardpull/orders';
import { JOBS, ORDERS_QUEUE, orderStepJobId, producerConnection } from '@cardpull/queue';
import { barePool, env } from './env';

const concurrency = Number(env('CONCURRENCY', '32'));
const seconds = Number(env('SECONDS', '8'));
const warmupSeconds = Number(env('WARMUP_SECONDS', '2'));
const rate = Number(env('RATE', '0'));

const pool = barePool();
const queue = new Queue(ORDERS_QUEUE, { connection: producerConnection(env('REDIS_URL')), prefix: env('REDIS_PREFIX', 'cardpull') });
let redisErrors = 0;
queue.on('error', (err) => {
  if (!redisErrors++) process.stderr.write(`Redis: ${err.message}\n`);
});

const INSERT = `WITH o AS (
    INSERT INTO orders (id, client, idempotency_key, request_hash, status, mode, gift_card_code, amount,
                        next_step, next_step_at, step_seq, created_at, updated_at)
    VALUES ($1, 'bare', $2, $3, 'pending', 'sync', 'FAST-FREE', $4, 'sync_call', now(), 1, now(), now())
    ON CONFLICT (client, idempotency_key) DO NOTHING
    RETURNING id
  )
  INSERT INTO attempts (request_id, order_id, seq, kind, state, created_at, updated_at)
  SELECT $5, o.id, 1, 'sync', 'created', now(), now() FROM o`;

let seq = 0;
async function createOrder(): Promise<void> {
  const id = uuidv7();
  const amount = 100 + Math.floor(Math.random() * 9_901);
  const body = JSON.stringify({ gift_card_code: 'FAST-FREE', amount, mode: 'sync' });
  const hash = createHash('sha256').update(body).digest('hex');
  await pool.query(INSERT, [id, `bare-${process.pid}-${++seq}`, hash, amount, randomUUID()]);
  await queue.add('sync_call', { orderId: id, stepSeq: 1 }, { ...JOBS.sync_call.options, jobId: orderStepJobId(id, 1), delay: 0 });
}

async function closedLoop(durationS: number, loops: number): Promise<{ ops: number; errors: number; latencies: number[]; seconds: number }> {
  const started = performance.now();
  const deadline = started + durationS * 1000;
  let ops = 0;
  let errors = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        try {
          await createOrder();
          ops++;
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { ops, errors, latencies, seconds: (performance.now() - started) / 1000 };
}

async function paced(perS: number, durationS: number): Promise<{ ops: number; errors: number; latencies: number[]; seconds: number }> {
  const total = Math.round(perS * durationS);
  const start = performance.now() + 50;
  const latencies: number[] = [];
  let ops = 0;
  let errors = 0;
  const all: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perS;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    all.push(
      createOrder().then(
        () => {
          ops++;
          latencies.push(performance.now() - due);
        },
        () => {
          errors++;
        },
      ),
    );
  }
  await Promise.all(all);
  return { ops, errors, latencies, seconds: (performance.now() - start) / 1000 };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};

async function main(): Promise<void> {
  await queue.waitUntilReady();
  if (warmupSeconds > 0) await closedLoop(warmupSeconds, Math.min(concurrency, 8));
  process.stdout.write('timing\n');
  const r = rate > 0 ? await paced(rate, seconds) : await closedLoop(seconds, concurrency);
  process.stdout.write(
    `${JSON.stringify({ ops: r.ops, errors: r.errors, seconds: r.seconds, rate: r.ops / r.seconds, p50Ms: pct(r.latencies, 50), p99Ms: pct(r.latencies, 99), maxMs: Math.max(...r.latencies) })}\n`,
  );
  // The bench reads the CPU of this process and its Postgres backends once the result is out.
  await new Promise((r) => setTimeout(r, 500));
  await queue.close();
  await pool.end();
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
