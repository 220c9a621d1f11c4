import { type DynamicModule, Module } from '@nestjs/common';
import type pino from 'pino';
import { ConfigModule, type ServiceConfig } from '@cardpull/config';
import { DbModule } from '@cardpull/db';
import { LoggerModule } from '@cardpull/logger';
import { HealthModule, MetricsModule } from '@cardpull/ops';
import { PartnerModule } from '@cardpull/partner-client';
import { FleetCountersModule, QueuesRootModule } from '@cardpull/platform';
import { VaultModule } from '@cardpull/vault';
import { ProcessorsModule } from './processors/processors.module';
import { TasksModule } from './tasks.module';
import { TrafficModule } from '@cardpull/traffic';

@Module({})
export class WorkerModule {
  /**
   * The worker process: the processors (processors/) that run the order steps (steps/) and deliver
   * callbacks (callbacks/), and the periodic tasks (recovery/): sweeper, reconciler, circuit probe, balance
   * watch, catalog refresh; over HTTP (WORKER_PORT) only /health/live, /health/ready and /metrics.
   */
  static forConfig(config: ServiceConfig, logStream?: pino.DestinationStream): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forService(config),
        LoggerModule.forRoot({ name: 'worker', level: config.LOG_LEVEL, stream: logStream }),
        DbModule,
        QueuesRootModule.forTarget(config),
        VaultModule,
        PartnerModule,
        TrafficModule,
        // /metrics takes API keys: the same throttled check as the API's, counted with it.
        FleetCountersModule,
        ProcessorsModule,
        TasksModule,
        HealthModule,
        MetricsModule,
      ],
    };
  }
}
