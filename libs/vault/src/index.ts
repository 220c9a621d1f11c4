export * from './vault';
export * from './vault.module';
export * from './reencrypt';
