export * from './vault';
export * from './vault.module';
