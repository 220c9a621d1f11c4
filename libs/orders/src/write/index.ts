export * from './after-commit';
export * from './attempt-note';
export * from './db-clock';
export * from './intake.repository';
export * from './steps.repository';
export * from './transitions.repository';
