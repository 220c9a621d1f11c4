import { BullModule } from '@nestjs/bullmq';
import { type DynamicModule, Module } from '@nestjs/common';
import type pino from 'pino';
import { ConfigModule, type ServiceConfig } from '@cardpull/config';
import { DbModule } from '@cardpull/db';
import { LoggerModule } from '@cardpull/logger';
import { OrdersCoreModule } from '@cardpull/orders';
import { PartnerModule } from '@cardpull/partner-client';
import { ApiKeyGuard, ClientThrottlerGuard, FixedWindowThrottlerStorage, HealthModule } from '@cardpull/platform';
import { MetricsModule } from '@cardpull/platform/metrics';
import { ThrottlerModule } from '@nestjs/throttler';
import { producerConnection } from '@cardpull/queue';
import { VaultModule } from '@cardpull/vault';
import { AdminModule } from './admin/admin.module';
import { CatalogController } from './catalog/catalog.controller';
import { CatalogService } from './catalog/catalog.service';
import { OrdersController } from './orders/orders.controller';
import { OrdersService } from './orders/orders.service';

@Module({})
export class ApiModule {
  /** The API process: REST intake and queries. It enqueues; it never pulls a card itself. */
  static forConfig(config: ServiceConfig, logStream?: pino.DestinationStream): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forService(config),
        LoggerModule.forRoot({ name: 'api', level: config.LOG_LEVEL, stream: logStream }),
        DbModule,
        BullModule.forRoot({ connection: producerConnection(config.REDIS_URL), prefix: config.REDIS_PREFIX }),
        VaultModule,
        PartnerModule,
        OrdersCoreModule,
        HealthModule,
        MetricsModule,
        AdminModule,
        ThrottlerModule.forRoot({
          throttlers: [{ ttl: config.RATE_LIMIT_WINDOW_MS, limit: config.RATE_LIMIT_PER_CLIENT }],
          storage: new FixedWindowThrottlerStorage(),
        }),
      ],
      controllers: [OrdersController, CatalogController],
      providers: [OrdersService, CatalogService, ApiKeyGuard, ClientThrottlerGuard],
    };
  }
}
