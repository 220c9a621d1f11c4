import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import { CARD_COLUMNS, type CardRow } from '../model/order.types';

/** A card held for a refund or reuse: one of the order's cards that is not `orders.card_id`. */
const HELD = `c.order_id = $1 AND c.partner_card_id = $2 AND c.role IN ('surplus', 'mismatch')
  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = c.order_id AND o.card_id = c.id)`;

/**
 * The operator's reveal of a card kept for a refund or reuse (a surplus or mismatched card), which the
 * Order resource and the order page always mask: the card to open, and the audit entry of each reveal.
 * The order's own card is never found here (it is the client's; the operators never see it).
 */
@Injectable()
export class CardRevealRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The order's held card with this partner card id, or null (no such card, or it is the order's own). */
  async heldCard(orderId: string, partnerCardId: string): Promise<CardRow | null> {
    const { rows } = await this.pool.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards c WHERE ${HELD}`, [orderId, partnerCardId]);
    return rows[0] ?? null;
  }

  /**
   * Writes `card_revealed` on the order's timeline (actor, the partner card id, its role, the reason), if
   * the card is still held by the order; false when it is not (then nothing may be shown).
   */
  async recordReveal(orderId: string, partnerCardId: string, actor: string, reason: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO order_events (order_id, type, request_id, actor, detail)
       SELECT c.order_id, 'card_revealed', c.request_id, $3, jsonb_build_object('partner_card_id', c.partner_card_id, 'role', c.role::text, 'reason', $4::text)
       FROM cards c WHERE ${HELD}`,
      [orderId, partnerCardId, actor, reason],
    );
    return rowCount === 1;
  }
}
