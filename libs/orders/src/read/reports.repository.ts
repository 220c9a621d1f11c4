import type { Pool } from 'pg';
import type { ReportOrder } from './read-models';

/**
 * The reconciliation report's read: every order created in [from, to) with its attempts and every card
 * stored for it, oldest first. A function of a pool (not a provider): the report runs as a command too,
 * without the application around it.
 */
export async function reportOrders(pool: Pool, from: Date, to: Date): Promise<ReportOrder[]> {
  const { rows } = await pool.query<ReportOrder>(
    `SELECT o.id, o.client, o.created_at, o.status, o.mode, o.gift_card_code, o.amount, o.completed_at,
            (SELECT json_agg(json_build_object('request_id', a.request_id, 'state', a.state, 'partner_status', a.partner_status,
                                               'error_code', a.error_code) ORDER BY a.seq)
               FROM attempts a WHERE a.order_id = o.id) AS attempts,
            COALESCE((SELECT json_agg(json_build_object('partner_card_id', c.partner_card_id, 'request_id', c.request_id,
                                        'role', c.role, 'amount', c.amount, 'gift_card_code', c.gift_card_code) ORDER BY c.created_at)
               FROM cards c WHERE c.order_id = o.id), '[]') AS cards
     FROM orders o
     WHERE o.created_at >= $1 AND o.created_at < $2 ORDER BY o.created_at, o.id`,
    [from, to],
  );
  return rows;
}
