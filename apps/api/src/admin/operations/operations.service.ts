import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, isPlainPassword, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';
import { ORDER_STATUSES } from '@cardpull/orders';
import { PartnerPanel, type PartnerPanelModel } from './partner-panel.service';

/** How many needs_attention orders the page lists (the count above it is exact). */
export const ATTENTION_LIMIT = 100;
/** How many surplus and mismatched cards the page lists (the counts above them are exact). */
export const EXTRA_CARDS_LIMIT = 50;
const RECENT_LIMIT = 15;

export interface OrderSummary {
  id: string;
  status: string;
  client: string;
  mode: string;
  giftCardCode: string;
  amount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttentionRow extends OrderSummary {
  /** The order's error code: unknown_outcome, card_mismatch, ... */
  errorCode: string | null;
  /** The reason the worker gave (the order's error), e.g. no definitive answer for a request ID since ... */
  reason: string | null;
  requestId: string | null;
  calls: number | null;
  /** The partner's last answer to that request ID (why its outcome is unknown). */
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  unknownSince: Date | null;
}

/** A card the partner billed that is not its order's card: a surplus, or one that does not match its order. */
export interface ExtraCardRow {
  createdAt: Date;
  role: 'surplus' | 'mismatch';
  partnerCardId: string;
  requestId: string;
  orderId: string;
  orderStatus: string;
  giftCardCode: string;
  amount: number;
  mismatch: string | null;
}

export interface OperationsModel {
  counts: { status: string; count: number }[];
  total: number;
  attention: AttentionRow[];
  /** Cards to recover, newest first (at most EXTRA_CARDS_LIMIT), and how many there are of each role. */
  extraCards: ExtraCardRow[];
  extraCardCounts: { surplus: number; mismatch: number };
  recent: OrderSummary[];
  partner: PartnerPanelModel;
  /** ADMIN_USERS still has a plain-text password (fine locally; refused with PARTNER_ENV=production). */
  plainPasswords: boolean;
}

/** The columns of an OrderSummary, from `orders o` (the operations page and the search). */
export const SUMMARY_COLUMNS = `o.id, o.status, o.client, o.mode, o.gift_card_code AS "giftCardCode", o.amount, o.created_at AS "createdAt", o.updated_at AS "updatedAt"`;

/** The operations page's view model: order counts, the needs_attention queue, recent orders, the partner panel. */
@Injectable()
export class OperationsService {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly partnerPanel: PartnerPanel,
  ) {}

  async overview(): Promise<OperationsModel> {
    const [counts, attention, extra, recent, partner] = await Promise.all([this.counts(), this.attention(), this.extraCards(), this.recent(), this.partnerPanel.build()]);
    return {
      counts,
      total: counts.reduce((sum, c) => sum + c.count, 0),
      attention,
      extraCards: extra.rows,
      extraCardCounts: extra.counts,
      recent,
      partner,
      plainPasswords: this.config.ADMIN_USERS.some(isPlainPassword),
    };
  }

  private async counts(): Promise<OperationsModel['counts']> {
    const { rows } = await this.pool.query<{ status: string; count: number }>('SELECT status::text AS status, count(*)::int AS count FROM orders GROUP BY status');
    const by = new Map(rows.map((r) => [r.status, r.count]));
    return ORDER_STATUSES.map((status) => ({ status, count: by.get(status) ?? 0 }));
  }

  private async attention(): Promise<AttentionRow[]> {
    const { rows } = await this.pool.query<AttentionRow>(
      `SELECT ${SUMMARY_COLUMNS}, o.error_code AS "errorCode", o.error_message AS reason, a.request_id AS "requestId", a.call_count AS calls,
              a.error_code AS "lastErrorCode", a.error_message AS "lastErrorMessage", a.unknown_since AS "unknownSince"
       FROM orders o
       LEFT JOIN LATERAL (SELECT request_id, call_count, error_code, error_message, unknown_since FROM attempts WHERE order_id = o.id ORDER BY seq DESC LIMIT 1) a ON true
       WHERE o.status = 'needs_attention' ORDER BY o.id LIMIT $1`,
      [ATTENTION_LIMIT],
    );
    return rows;
  }

  /** Surplus and mismatched cards (the (role, created_at) index): never their code, PIN or PDF link. */
  private async extraCards(): Promise<{ rows: ExtraCardRow[]; counts: OperationsModel['extraCardCounts'] }> {
    const [list, counts] = await Promise.all([
      this.pool.query<ExtraCardRow>(
        `SELECT c.created_at AS "createdAt", c.role::text AS role, c.partner_card_id AS "partnerCardId", c.request_id AS "requestId",
                c.order_id AS "orderId", o.status::text AS "orderStatus", c.gift_card_code AS "giftCardCode", c.amount, c.mismatch
         FROM cards c JOIN orders o ON o.id = c.order_id
         WHERE c.role IN ('surplus', 'mismatch') ORDER BY c.created_at DESC LIMIT $1`,
        [EXTRA_CARDS_LIMIT],
      ),
      this.pool.query<{ role: 'surplus' | 'mismatch'; n: number }>(`SELECT role::text AS role, count(*)::int AS n FROM cards WHERE role IN ('surplus', 'mismatch') GROUP BY role`),
    ]);
    const of = (role: string) => counts.rows.find((r) => r.role === role)?.n ?? 0;
    return { rows: list.rows, counts: { surplus: of('surplus'), mismatch: of('mismatch') } };
  }

  private async recent(): Promise<OrderSummary[]> {
    const { rows } = await this.pool.query<OrderSummary>(`SELECT ${SUMMARY_COLUMNS} FROM orders o ORDER BY o.id DESC LIMIT $1`, [RECENT_LIMIT]);
    return rows;
  }
}
