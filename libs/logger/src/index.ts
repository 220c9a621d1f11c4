export * from './job-context';
export * from './logger.module';
export * from './redaction';
export * from './lazy-child';
export * from './level';
