import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders/orders.module';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { PartnerStatusModule } from '../partner/partner-status.module';
import { MetricsController } from './metrics.controller';
import { METRICS_REGISTRY, createMetricsRegistry } from './metrics-registry';
import { OperationsMetrics } from './operations.metrics';
import { PartnerCallMetrics } from './partner-call.metrics';

/**
 * GET /metrics (Prometheus text format) with this app's own prom-client registry: default process and
 * Node metrics, partner call metrics, and the operations gauges. Every name starts with `cardpull_`.
 */
@Module({
  imports: [OrdersCoreModule, PartnerStatusModule],
  controllers: [MetricsController],
  providers: [{ provide: METRICS_REGISTRY, useFactory: createMetricsRegistry }, PartnerCallMetrics, OperationsMetrics, ApiKeyGuard],
  exports: [METRICS_REGISTRY, PartnerCallMetrics],
})
export class MetricsModule {}
