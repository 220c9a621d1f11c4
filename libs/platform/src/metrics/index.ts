export * from './metrics-registry';
export * from './metrics.controller';
export * from './metrics.module';
export * from './operations.metrics';
export * from './partner-call.metrics';
