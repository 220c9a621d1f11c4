export * from './api-error';
export * from './error-handling';
export * from './health.module';
export * from './http-app';
export * from './preflight';
export * from './auth/api-key.guard';
export * from './auth/client-throttler.guard';
export * from './auth/fixed-window-throttler.storage';
