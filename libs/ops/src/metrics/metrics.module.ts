import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { ApiKeyGuard, createMetricsRegistry, METRICS_REGISTRY, MetricsController } from '@cardpull/platform';
import { PartnerStatusModule } from '../partner-status/partner-status.module';
import { CatalogChangeMetrics } from './catalog-change.metrics';
import { OperationsMetrics } from './operations.metrics';
import { OrderMetrics } from './order.metrics';
import { PartnerCallMetrics } from './partner-call.metrics';
import { PartnerTrafficMetrics } from './partner-traffic.metrics';

/**
 * GET /metrics (Prometheus text format) with this app's own prom-client registry: default process and
 * Node metrics, partner call metrics, the fleet's partner limits, the operations gauges, and the catalog changes. Every name starts with `cardpull_`.
 */
@Module({
  imports: [OrdersCoreModule, PartnerStatusModule],
  controllers: [MetricsController],
  providers: [{ provide: METRICS_REGISTRY, useFactory: createMetricsRegistry }, PartnerCallMetrics, PartnerTrafficMetrics, OperationsMetrics, OrderMetrics, CatalogChangeMetrics, ApiKeyGuard],
  exports: [METRICS_REGISTRY, PartnerCallMetrics, OrderMetrics],
})
export class MetricsModule {}
