export * from './metrics-registry';
export * from './metrics.controller';
