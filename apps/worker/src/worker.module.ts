import { BullModule } from '@nestjs/bullmq';
import { type DynamicModule, Module } from '@nestjs/common';
import type pino from 'pino';
import { ConfigModule, type ServiceConfig } from '@cardpull/config';
import { DbModule } from '@cardpull/db';
import { LoggerModule } from '@cardpull/logger';
import { OrdersWorkerModule } from '@cardpull/orders';
import { PartnerModule } from '@cardpull/partner-client';
import { HealthModule } from '@cardpull/platform';
import { MetricsModule } from '@cardpull/platform/metrics';
import { BalanceWatchModule } from '@cardpull/platform/partner';
import { producerConnection } from '@cardpull/queue';
import { VaultModule } from '@cardpull/vault';

@Module({})
export class WorkerModule {
  /**
   * The worker process: the processors that talk to the partner, the sweeper, the circuit probe and the
   * low-balance watch; over HTTP (WORKER_PORT) only /health/live, /health/ready and /metrics.
   */
  static forConfig(config: ServiceConfig, logStream?: pino.DestinationStream): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forService(config),
        LoggerModule.forRoot({ name: 'worker', level: config.LOG_LEVEL, stream: logStream }),
        DbModule,
        BullModule.forRoot({ connection: producerConnection(config.REDIS_URL), prefix: config.REDIS_PREFIX }),
        VaultModule,
        PartnerModule,
        OrdersWorkerModule,
        HealthModule,
        MetricsModule,
        BalanceWatchModule,
      ],
    };
  }
}
