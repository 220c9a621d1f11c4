export * from './limits';
export * from './redis-call-gate';
export * from './traffic.module';
