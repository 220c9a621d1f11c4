/**
 * The end-to-end baseline: one process doing the same work as the worker for a sync order, without the
 * service around it. A BullMQ worker on the orders queue (same concurrency) that leases the attempt with a
 * conditional UPDATE, makes the signed call with PartnerClient, seals code and PIN with the Vault
 * (AES-256-GCM) and, in one statement (one transaction), stores the card and completes the order.
 * No order events, outbox, metrics, logging context, sweeper or error classification beyond success.
 * Prints "timing" once it consumes jobs and one JSON line when stopped (SIGTERM).
 */
import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { LOCAL_DEFAULTS } from '@cardpull/config';
import { PartnerClient } from '@cardpull/partner-client';
import { type OrderJobData, ORDERS_QUEUE, workerConnection } from '@cardpull/queue';
import { Vault, cardContext } from '@cardpull/vault';
import { barePool, env } from './env';

const concurrency = Number(env('CONCURRENCY', '32'));
const timeoutMs = Number(env('PARTNER_TIMEOUT_MS', '10000'));

const pool = barePool();
const partner = new PartnerClient({
  baseUrl: env('PARTNER_BASE_URL'),
  apiKey: LOCAL_DEFAULTS.PARTNER_API_KEY,
  identifier: LOCAL_DEFAULTS.PARTNER_IDENTIFIER,
  sharedKeyHex: LOCAL_DEFAULTS.PARTNER_SHARED_KEY,
  signatureForm: 'example',
  timeoutMs,
  connections: Math.max(16, concurrency),
});
const [keyId, keyB64] = LOCAL_DEFAULTS.CARD_ENCRYPTION_KEYS.split(':') as [string, string];
const vault = new Vault([{ id: keyId, key: Buffer.from(keyB64, 'base64') }]);

/** The lease: only an attempt not sent yet is taken (a second copy of the job finds nothing). */
const LEASE = `UPDATE attempts a SET state = 'sent', call_count = a.call_count + 1, first_sent_at = now(), last_sent_at = now(), updated_at = now()
  FROM orders o WHERE a.order_id = $1 AND o.id = a.order_id AND a.state = 'created'
  RETURNING a.request_id, o.gift_card_code, o.amount`;

const COMPLETE = `WITH card AS (
    INSERT INTO cards (id, order_id, request_id, partner_card_id, key_id, code_enc, pin_enc, expire_at, amount, gift_card_code, pdf_url)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id
  ), att AS (
    UPDATE attempts SET state = 'succeeded', partner_status = 'issued', updated_at = now() WHERE request_id = $3
  )
  UPDATE orders SET status = 'completed', card_id = $1, completed_at = now(), next_step = NULL, next_step_at = NULL, step_seq = step_seq + 1, updated_at = now()
  WHERE id = $2 AND status <> 'completed'`;

let completed = 0;
let skipped = 0;

async function process_(job: Job<OrderJobData>): Promise<string> {
  const { rows } = await pool.query<{ request_id: string; gift_card_code: string; amount: number }>(LEASE, [job.data.orderId]);
  const lease = rows[0];
  if (!lease) {
    skipped++;
    return 'not leased';
  }
  const out = await partner.createCard(lease.request_id, lease.gift_card_code, lease.amount);
  if (out.kind !== 'success') throw new Error(`partner answered ${out.kind}: ${out.message}`);
  const card = out.value;
  const id = randomUUID();
  const code = vault.seal(card.code, cardContext(id, 'code', job.data.orderId));
  const pin = card.pin_code ? vault.seal(card.pin_code, cardContext(id, 'pin', job.data.orderId)) : null;
  await pool.query(COMPLETE, [
    id,
    job.data.orderId,
    lease.request_id,
    card.id,
    code.keyId,
    code.blob,
    pin?.blob ?? null,
    card.expire_at ? new Date(card.expire_at) : null,
    card.amount,
    card.gift_card_code,
    card.pdf_url ?? null,
  ]);
  completed++;
  return 'completed';
}

const worker = new Worker<OrderJobData>(ORDERS_QUEUE, process_, {
  connection: workerConnection(env('REDIS_URL')),
  prefix: env('REDIS_PREFIX', 'cardpull'),
  concurrency,
  lockDuration: 10_000,
  stalledInterval: 5_000,
});
worker.on('error', (err) => process.stderr.write(`worker error: ${err.message}\n`));
worker.on('failed', (job, err) => process.stderr.write(`job ${job?.id} failed: ${err.message}\n`));
void worker.waitUntilReady().then(() => process.stdout.write('timing\n'));

process.once('SIGTERM', () => {
  void (async () => {
    await worker.close();
    await partner.close();
    await pool.end();
    process.stdout.write(`${JSON.stringify({ completed, skipped })}\n`);
    process.exit(0);
  })();
});
