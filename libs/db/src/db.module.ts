import { Global, Module, type OnApplicationShutdown, Inject } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL, createPgPool } from './pg-pool';

@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [SERVICE_CONFIG],
      useFactory: (config: ServiceConfig) => createPgPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS }),
    },
  ],
  exports: [PG_POOL],
})
/** The pool ends last (onApplicationShutdown), after the workers drained their jobs (beforeApplicationShutdown). */
export class DbModule implements OnApplicationShutdown {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
