export * from './log-capture';
export * from './test-db';
export * from './test-redis';
export * from './wait';
export * from './sim-harness';
export * from './invariants';
export * from './pgbouncer';
export * from './redis-cluster';
