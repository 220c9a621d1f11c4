import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';

/**
 * The ledger's book (ledger_book, one row): the partner account and currency that the order changes'
 * movements are written in by the ledger's triggers. Set at start from PARTNER_ACCOUNT and PARTNER_CURRENCY
 * (only when it differs: a fleet's processes agree, so one write at most), logged when it changes.
 */
@Injectable()
export class LedgerBook implements OnApplicationBootstrap {
  private readonly log = new Logger(LedgerBook.name);

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'PARTNER_ACCOUNT' | 'PARTNER_CURRENCY'>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { rows } = await this.pool.query<{ partner_account: string; currency: string }>(
      `WITH old AS (SELECT partner_account, currency FROM ledger_book WHERE id = 1)
       UPDATE ledger_book SET partner_account = $1, currency = $2, updated_at = now()
       WHERE id = 1 AND (partner_account, currency) IS DISTINCT FROM ($1, $2)
       RETURNING (SELECT partner_account FROM old), (SELECT currency FROM old)`,
      [this.config.PARTNER_ACCOUNT, this.config.PARTNER_CURRENCY],
    );
    const was = rows[0];
    if (was) this.log.warn({ was, now: { account: this.config.PARTNER_ACCOUNT, currency: this.config.PARTNER_CURRENCY } }, 'the ledger book changed: new movements go to this partner account and currency');
  }

  /** The book as it is: where the order changes' movements go. */
  async current(): Promise<{ partnerAccount: string; currency: string }> {
    const { rows } = await this.pool.query<{ partnerAccount: string; currency: string }>(`SELECT partner_account AS "partnerAccount", currency FROM ledger_book WHERE id = 1`);
    return rows[0] ?? { partnerAccount: this.config.PARTNER_ACCOUNT, currency: this.config.PARTNER_CURRENCY };
  }
}
