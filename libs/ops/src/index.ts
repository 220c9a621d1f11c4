export * from './health.module';
export * from './metrics/metrics.module';
export * from './metrics/operations.metrics';
export * from './metrics/order.metrics';
export * from './metrics/partner-call.metrics';
export * from './metrics/partner-traffic.metrics';
export * from './partner-status/partner-status.module';
export * from './partner-status/partner-status.service';
