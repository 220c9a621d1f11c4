import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { PrismaClient } from './generated/client';

export const PG_POOL = Symbol('PG_POOL');

/**
 * The Prisma client over the pg driver adapter (no native engine). It shares one pg Pool with the
 * repositories' raw SQL on hot paths, so the process holds DATABASE_POOL_SIZE connections in all.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  constructor(@Inject(PG_POOL) readonly pool: Pool) {
    super({ adapter: new PrismaPg(pool) });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
  }
}

export function createPgPool(databaseUrl: string, max: number): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // A connection that breaks (Postgres restarted) must never crash the process. pg-pool only listens on
  // idle clients; a client checked out between two queries (a transaction, the sweeper holding its lock)
  // would emit an unhandled 'error'. With a listener of its own, its next query fails instead, and the
  // pool drops it on release.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
