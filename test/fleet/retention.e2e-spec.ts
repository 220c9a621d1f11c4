import { Client } from 'pg';
import { RetentionRepository } from '@cardpull/orders';
import { Retention } from '../../apps/worker/src/maintenance/retention.service';
import { createOrder, insertOrder, useStack, waitForOrder } from '../support/stack';
import { withDb } from '../recovery/support/recovery';

/**
 * Issue 13, item 4: data that stays small. Terminal orders untouched for RETENTION_DAYS move to
 * orders_archive (one document each, card secrets still sealed) and leave the hot tables; the card
 * secrets of archived orders go RETENTION_SECRETS_DAYS after the order ended unless it is disputed.
 * Never archived: an order whose request ID may still yield a card, with a callback to deliver, with a
 * surplus or mismatched card, or held by someone (skipped, not waited for).
 */
describe('retention: archive old terminal orders, then destroy their card secrets unless disputed', () => {
  const stack = useStack({ env: { RETENTION_DAYS: '30', RETENTION_SECRETS_DAYS: '90', RETENTION_BATCH: '3', RETENTION_INTERVAL_MS: '3600000' } });

  it('moves what may go, keeps what may not, and never waits for a locked order', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1000 + i })).id);
    // An amount the partner refuses (the API would check it against the catalog): a failed order.
    const failed = (await insertOrder(stack, { giftCardCode: 'ACME-BOOKS-FIXED', amount: 1234 })).id;
    for (const id of [...ids, failed]) await waitForOrder(stack, id);
    const [old1, old2, old3, ancient, disputed, unknownAttempt, pendingCallback, surplus, locked, recent] = ids as [string, string, string, string, string, string, string, string, string, string];
    const held: string[] = [unknownAttempt, pendingCallback, surplus, locked, recent];

    await withDb(stack, async (db) => {
      const ago = (days: number, list: string[]) =>
        db.query(`UPDATE orders SET created_at = now() - make_interval(days => $1), updated_at = now() - make_interval(days => $1), completed_at = coalesce(completed_at, now()) - make_interval(days => $1) WHERE id = ANY($2::uuid[])`, [days, list]);
      await ago(40, [old1, old2, old3, failed, unknownAttempt, pendingCallback, surplus, locked]);
      await ago(100, [ancient, disputed]);
      await db.query(`UPDATE attempts SET state = 'unknown' WHERE order_id = $1`, [unknownAttempt]);
      await db.query(
        // Due in an hour: the worker's sweeper (every 500 ms here) would otherwise enqueue it, and its delivery
        // (refused: a host no one allowed) end it before retention runs on a loaded machine (7 archived, not 6).
        `INSERT INTO callback_events (id, order_id, client, type, url, snapshot, next_attempt_at) VALUES (gen_random_uuid(), $1, 'shop', 'order.completed', 'https://x.example.com/h', '{}', now() + interval '1 hour')`,
        [pendingCallback],
      );
      await db.query(`UPDATE cards SET role = 'surplus' WHERE order_id = $1`, [surplus]);
    });
    expect(await stack.worker!.get(RetentionRepository).markDisputed(disputed, 'admin:test', 'customer says the code did not work')).toBe(true);

    // Someone holds one old order (a worker's transaction): retention skips it without waiting.
    const holder = new Client({ connectionString: stack.db.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM orders WHERE id = $1 FOR UPDATE', [locked]);
    // It returns while the lock is still held: had it waited for the lock, it could not return before the ROLLBACK below.
    const report = await stack.worker!.get(Retention).runNow();
    await holder.query('ROLLBACK');
    await holder.end();

    const moved = [old1, old2, old3, failed, ancient, disputed];
    expect(report).toEqual({ archived: moved.length, secretsDestroyed: 1 });
    await withDb(stack, async (db) => {
      const live = (await db.query<{ id: string }>('SELECT id FROM orders WHERE id = ANY($1::uuid[])', [[...moved, ...held]])).rows.map((r) => r.id);
      expect(live.sort()).toEqual([...held].sort());
      // Gone from every hot table, not only from orders.
      for (const table of ['attempts', 'cards', 'order_events']) {
        const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE order_id = ANY($1::uuid[])`, [moved]);
        expect({ table, n: Number(rows[0]!.n) }).toEqual({ table, n: 0 });
      }
      const archive = await db.query<{ id: string; status: string; document: { cards: Record<string, unknown>[]; attempts: unknown[]; events: unknown[] }; secrets_destroyed_at: Date | null; disputed_at: Date | null }>(
        'SELECT id, status, document, secrets_destroyed_at, disputed_at FROM orders_archive',
      );
      const byId = new Map(archive.rows.map((r) => [r.id, r]));
      expect([...byId.keys()].sort()).toEqual([...moved].sort());
      // 40 days: archived whole, the sealed secrets still in it.
      const card40 = byId.get(old1)!.document.cards[0]!;
      expect(card40.code_enc).toEqual(expect.stringMatching(/^\\x/));
      expect(byId.get(old1)!.document.attempts.length).toBe(1);
      expect(byId.get(old1)!.document.events.length).toBeGreaterThan(1);
      expect(byId.get(failed)!.status).toBe('failed');
      // 100 days: the secrets are gone, the rest of the card stays; a disputed order keeps them.
      const card100 = byId.get(ancient)!.document.cards[0]!;
      expect([card100.code_enc, card100.pin_enc, card100.secrets_destroyed]).toEqual([undefined, undefined, true]);
      expect(card100.partner_card_id).toEqual(expect.any(String));
      expect(byId.get(ancient)!.secrets_destroyed_at).not.toBeNull();
      expect(byId.get(disputed)!.disputed_at).not.toBeNull();
      expect(byId.get(disputed)!.document.cards[0]!.code_enc).toEqual(expect.stringMatching(/^\\x/));
    });
    // The next run finds the rest still held, and nothing more to do.
    expect(await stack.worker!.get(Retention).runNow()).toEqual({ archived: 1, secretsDestroyed: 0 });
  });
});
