export * from './api-keys';
export * from './config-error';
export * from './config.module';
export * from './encryption-keys';
export * from './settings';
export * from './admin-users';
export * from './callbacks';
export * from './defaults';
