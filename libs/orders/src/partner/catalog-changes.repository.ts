import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';
import type { FacialValues } from '@cardpull/partner-client';
import { CATALOG_CHANGE_KINDS, amountWithdrawn, type CatalogChangeKind } from './catalog-diff';

/** A recorded change of the partner's catalog (catalog_changes). */
export interface CatalogChangeRow {
  id: string;
  batchId: string;
  detectedAt: Date;
  giftCardCode: string;
  kind: CatalogChangeKind;
  before: unknown;
  after: unknown;
  detail: Record<string, unknown> | null;
}

export const CATALOG_CHANGE_COLUMNS = `id::text AS id, batch_id AS "batchId", detected_at AS "detectedAt", gift_card_code AS "giftCardCode", kind, before, after, detail`;

/**
 * A change as the API and the `catalog.changed` event show it: the change, what it was and became, and the
 * detail's fields beside them (`withdrawn_amounts`, `added_amounts`; `scheduled`).
 */
export function catalogChangeView(c: CatalogChangeRow): Record<string, unknown> {
  return { id: c.id, gift_card_code: c.giftCardCode, kind: c.kind, detected_at: c.detectedAt.toISOString(), before: c.before, after: c.after, ...c.detail };
}

/** How many face value changes of one gift card intake looks through for the one that withdrew an amount. */
const FACE_CHANGES_LOOKED_AT = 100;

/** The reads of the change feed: the operations page, the metrics, and intake's refusals (written by CatalogRepository.replace). */
@Injectable()
export class CatalogChangesRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The latest changes, newest first. */
  async latest(limit: number): Promise<CatalogChangeRow[]> {
    const { rows } = await this.pool.query<CatalogChangeRow>(`SELECT ${CATALOG_CHANGE_COLUMNS} FROM catalog_changes ORDER BY id DESC LIMIT $1`, [limit]);
    return rows;
  }

  /** Every change recorded, by kind (every kind present, 0 included). */
  async counts(): Promise<Record<CatalogChangeKind, number>> {
    const { rows } = await this.pool.query<{ kind: CatalogChangeKind; n: number }>(`SELECT kind, count(*)::int AS n FROM catalog_changes GROUP BY kind`);
    const counts = Object.fromEntries(CATALOG_CHANGE_KINDS.map((k) => [k, 0])) as Record<CatalogChangeKind, number>;
    for (const r of rows) counts[r.kind] = r.n;
    return counts;
  }

  /** When the gift card was withdrawn from the catalog, if its latest appearance or disappearance is a removal. */
  async withdrawnAt(code: string): Promise<Date | null> {
    const { rows } = await this.pool.query<{ kind: CatalogChangeKind; detectedAt: Date }>(
      `SELECT kind, detected_at AS "detectedAt" FROM catalog_changes WHERE gift_card_code = $1 AND kind IN ('added', 'removed') ORDER BY id DESC LIMIT 1`,
      [code],
    );
    return rows[0]?.kind === 'removed' ? rows[0].detectedAt : null;
  }

  /** When a face value change of the gift card last withdrew `amount` (null: none did, as far as the feed knows). */
  async amountWithdrawnAt(code: string, amount: number): Promise<Date | null> {
    const { rows } = await this.pool.query<{ before: FacialValues; after: FacialValues; detectedAt: Date }>(
      `SELECT before, after, detected_at AS "detectedAt" FROM catalog_changes WHERE gift_card_code = $1 AND kind = 'face_values_changed' ORDER BY id DESC LIMIT $2`,
      [code, FACE_CHANGES_LOOKED_AT],
    );
    return rows.find((r) => amountWithdrawn(r.before, r.after, amount))?.detectedAt ?? null;
  }
}
