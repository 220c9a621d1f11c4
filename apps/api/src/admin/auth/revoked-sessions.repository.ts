import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@cardpull/db';

/**
 * Sessions ended by a logout (admin_revoked_sessions), shared by every API process: a session cookie is
 * signed, not stored, so without this list a copy stolen before the logout would live until it expires.
 */
@Injectable()
export class RevokedSessionsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Ends session `sid` now; rows of sessions past their expiry go at the same time. */
  async revoke(sid: string, expiresAt: Date): Promise<void> {
    await this.pool.query(
      `WITH gone AS (DELETE FROM admin_revoked_sessions WHERE expires_at < now())
       INSERT INTO admin_revoked_sessions (sid, expires_at) VALUES ($1, $2) ON CONFLICT (sid) DO NOTHING`,
      [sid, expiresAt],
    );
  }

  async isRevoked(sid: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM admin_revoked_sessions WHERE sid = $1', [sid]);
    return !!rowCount;
  }
}
