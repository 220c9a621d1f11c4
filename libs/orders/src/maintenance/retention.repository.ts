import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import { mayYieldCardSql } from '../model/attempt-facts';
import { ATTEMPT_WRITTEN_COLUMNS } from '../model/order.types';

/**
 * Which orders may leave the hot tables: terminal (completed or failed) with no step, untouched for the
 * retention, and with nothing that could still change them or that someone still works on:
 *  - no request ID that may still yield a card (mayYieldCardSql: open, or declared dead and still read
 *    for a card within RECONCILE_DEAD_RECHECK_MS): it is still asked about, and a card may still come
 *    (invariant 3);
 *  - no lease in force (a worker or the reconciler is asking the partner about it right now);
 *  - no callback still to deliver;
 *  - no card other than the order's own (a surplus or a mismatch): those wait for an operator on the
 *    operations page (cards to recover), and stay there until the order is archived by hand.
 * `FOR UPDATE SKIP LOCKED`: an order a worker or an operator holds is left for the next batch, so
 * archiving never waits on (or blocks) the work on live orders, and intake touches none of these rows.
 * In id order: ids are UUIDv7, so the primary key walks the oldest orders first and a batch stops at its
 * limit, without an index of its own and whatever the table's size.
 */
const PICK = `
  SELECT o.id FROM orders o
  WHERE o.created_at < now() - make_interval(days => $1::int)
    AND o.status IN ('completed', 'failed') AND o.next_step IS NULL
    AND o.updated_at < now() - make_interval(days => $1::int)
    AND (o.lease_expires_at IS NULL OR o.lease_expires_at < now())
    AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.order_id = o.id AND ${mayYieldCardSql('a', '$3')})
    AND NOT EXISTS (SELECT 1 FROM callback_events e WHERE e.order_id = o.id AND e.state = 'pending')
    AND NOT EXISTS (SELECT 1 FROM cards c WHERE c.order_id = o.id AND c.role <> 'order')
  ORDER BY o.id
  LIMIT $2
  FOR UPDATE OF o SKIP LOCKED`;

/** The card fields that are secrets: removed from the archive after RETENTION_SECRETS_DAYS. */
const SECRET_FIELDS = ['code_enc', 'pin_enc', 'pdf_enc', 'pdf_url'];

/**
 * The restore's insert of the attempts: every column but the database's own `in_doubt` (generated: it takes no
 * value, not even the archive's) and `unattended` (its trigger marks a restored open ID whose order has no next step).
 */
const RESTORED_ATTEMPT_COLUMNS = ATTEMPT_WRITTEN_COLUMNS.join(', ');

/** Retention (issue 13): the statements of the worker's retention task, each one short transaction. */
@Injectable()
export class RetentionRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /**
   * Moves up to `limit` archivable orders (PICK) into orders_archive, each as one document (its row,
   * attempts, cards with their secrets still sealed, timeline as order_timeline shows it, callbacks and their
   * deliveries), and
   * deletes them from the hot tables (the foreign keys cascade), in one statement: an order is either
   * still live or archived, never both or neither. Returns how many moved.
   */
  async archiveBatch(olderThanDays: number, limit: number, recheckMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `WITH picked AS (${PICK}),
       archived AS (
         INSERT INTO orders_archive (id, client, status, gift_card_code, amount, created_at, completed_at, disputed_at, document)
         SELECT o.id, o.client, o.status::text, o.gift_card_code, o.amount, o.created_at, o.completed_at, o.disputed_at,
                jsonb_build_object(
                  'order', to_jsonb(o),
                  'attempts', (SELECT coalesce(jsonb_agg(to_jsonb(a) ORDER BY a.seq), '[]') FROM attempts a WHERE a.order_id = o.id),
                  'cards', (SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.created_at), '[]') FROM cards c WHERE c.order_id = o.id),
                  'events', (SELECT coalesce(jsonb_agg(to_jsonb(e) ORDER BY e.at, e.id NULLS LAST), '[]') FROM order_timeline e WHERE e.order_id = o.id),
                  'callbacks', (SELECT coalesce(jsonb_agg(to_jsonb(cb) || jsonb_build_object('deliveries',
                                  (SELECT coalesce(jsonb_agg(to_jsonb(d)), '[]') FROM callback_deliveries d WHERE d.event_id = cb.id))), '[]')
                                FROM callback_events cb WHERE cb.order_id = o.id))
         FROM orders o JOIN picked p ON p.id = o.id
         ON CONFLICT (id) DO NOTHING
         RETURNING id)
       DELETE FROM orders WHERE id IN (SELECT id FROM archived)`,
      [olderThanDays, limit, recheckMs],
    );
    return rowCount ?? 0;
  }

  /**
   * Brings an archived order back into the hot tables, as it was archived (its row, attempts, cards, timeline,
   * callbacks and their deliveries), with a `restored_from_archive` entry on its timeline: for a card that
   * arrives for an archived order (invariant 3: never dropped). A card whose secrets retention destroyed
   * comes back with an empty code (shown as unreadable). Returns false when there is no such archived order.
   * The archive's documents are to_jsonb of the rows: a column added later with NOT NULL and no value in
   * the document must be given one here. The timeline's completion entry (no id) is its card's row, restored
   * with the cards, not an order_events row.
   */
  async restore(orderId: string, actor: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `WITH x AS (DELETE FROM orders_archive WHERE id = $1 RETURNING document),
       o AS (INSERT INTO orders SELECT (jsonb_populate_record(NULL::orders, x.document->'order')).* FROM x RETURNING id, status),
       a AS (INSERT INTO attempts (${RESTORED_ATTEMPT_COLUMNS}) SELECT ${ATTEMPT_WRITTEN_COLUMNS.map((c) => `r.${c}`).join(', ')}
             FROM x, jsonb_array_elements(x.document->'attempts') e, jsonb_populate_record(NULL::attempts, e) r),
       c AS (INSERT INTO cards SELECT (jsonb_populate_record(NULL::cards, '{"code_enc": "\\\\x"}'::jsonb || e)).* FROM x, jsonb_array_elements(x.document->'cards') e),
       ev AS (INSERT INTO order_events SELECT (jsonb_populate_record(NULL::order_events, e)).* FROM x, jsonb_array_elements(x.document->'events') e
              WHERE e->'id' <> 'null'::jsonb),
       cb AS (INSERT INTO callback_events SELECT (jsonb_populate_record(NULL::callback_events, e)).* FROM x, jsonb_array_elements(x.document->'callbacks') e),
       d AS (INSERT INTO callback_deliveries SELECT (jsonb_populate_record(NULL::callback_deliveries, d)).*
             FROM x, jsonb_array_elements(x.document->'callbacks') e, jsonb_array_elements(e->'deliveries') d)
       INSERT INTO order_events (order_id, type, from_status, to_status, actor, detail)
       SELECT o.id, 'restored_from_archive', o.status, o.status, $2, jsonb_build_object('why', 'a card arrived for it') FROM o`,
      [orderId, actor],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Removes the card secrets (sealed code, PIN, PDF and its link) from up to `limit` archived orders
   * completed (or created, for a failed one) more than `olderThanDays` ago, unless the order is disputed.
   * The rest of each card stays: which card, its value, its partner id. Returns how many orders.
   */
  async destroySecretsBatch(olderThanDays: number, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE orders_archive x
          SET secrets_destroyed_at = now(),
              document = jsonb_set(x.document, '{cards}',
                (SELECT coalesce(jsonb_agg(c - $3::text[] || jsonb_build_object('secrets_destroyed', true)), '[]') FROM jsonb_array_elements(x.document->'cards') c))
        WHERE x.id IN (
          SELECT id FROM orders_archive
          WHERE secrets_destroyed_at IS NULL AND disputed_at IS NULL
            AND coalesce(completed_at, created_at) < now() - make_interval(days => $1::int)
          ORDER BY archived_at LIMIT $2
          FOR UPDATE SKIP LOCKED)`,
      [olderThanDays, limit, SECRET_FIELDS],
    );
    return rowCount ?? 0;
  }

  /**
   * An operator's dispute: the order's card secrets are kept past RETENTION_SECRETS_DAYS. Live or archived;
   * returns false when there is no such order. The live order's timeline records who and why.
   */
  async markDisputed(orderId: string, actor: string, reason: string): Promise<boolean> {
    const live = await this.pool.query(
      `WITH o AS (UPDATE orders SET disputed_at = coalesce(disputed_at, now()) WHERE id = $1 RETURNING id)
       INSERT INTO order_events (order_id, type, actor, detail) SELECT id, 'disputed', $2, jsonb_build_object('reason', $3::text) FROM o`,
      [orderId, actor, reason],
    );
    if (live.rowCount) return true;
    const archived = await this.pool.query(
      `UPDATE orders_archive SET disputed_at = coalesce(disputed_at, now()),
              document = jsonb_set(document, '{disputes}', coalesce(document->'disputes', '[]') || jsonb_build_array(jsonb_build_object('at', now(), 'actor', $2::text, 'reason', $3::text)))
        WHERE id = $1`,
      [orderId, actor, reason],
    );
    return (archived.rowCount ?? 0) > 0;
  }
}
