export * from './balance-watch.service';
export * from './partner-status.module';
export * from './partner-status.service';
