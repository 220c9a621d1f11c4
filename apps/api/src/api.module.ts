import { type DynamicModule, Module } from '@nestjs/common';
import type pino from 'pino';
import { ConfigModule, type ServiceConfig } from '@cardpull/config';
import { DbModule } from '@cardpull/db';
import { LoggerModule } from '@cardpull/logger';
import { HealthModule, MetricsModule } from '@cardpull/ops';
import { OrdersCoreModule } from '@cardpull/orders';
import { PartnerModule } from '@cardpull/partner-client';
import { FleetCounters, FleetCountersModule, FleetThrottlerStorage, QueuesRootModule } from '@cardpull/platform';
import { ThrottlerModule } from '@nestjs/throttler';
import { VaultModule } from '@cardpull/vault';
import { AdminModule } from './admin/admin.module';
import { CatalogModule } from './catalog/catalog.module';
import { OrdersModule } from './orders/orders.module';
import { StatementsModule } from './statements/statements.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { TrafficModule } from '@cardpull/traffic';

@Module({})
export class ApiModule {
  /**
   * The API process: REST intake and queries (orders/, catalog/, statements/, subscriptions/) and the operators' pages (admin/). It
   * enqueues; it never pulls a card itself.
   */
  static forConfig(config: ServiceConfig, logStream?: pino.DestinationStream): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forService(config),
        LoggerModule.forRoot({ name: 'api', level: config.LOG_LEVEL, stream: logStream }),
        DbModule,
        QueuesRootModule.forTarget(config),
        VaultModule,
        PartnerModule,
        TrafficModule,
        FleetCountersModule,
        OrdersCoreModule,
        HealthModule,
        MetricsModule,
        OrdersModule,
        StatementsModule,
        SubscriptionsModule,
        CatalogModule,
        AdminModule,
        // The per-client rate limit, counted across the fleet (FleetCounters, in Redis).
        ThrottlerModule.forRootAsync({
          inject: [FleetCounters],
          useFactory: (counters: FleetCounters) => ({
            throttlers: [{ ttl: config.RATE_LIMIT_WINDOW_MS, limit: config.RATE_LIMIT_PER_CLIENT }],
            storage: new FleetThrottlerStorage(counters),
          }),
        }),
      ],
    };
  }
}
