export * from './ledger.repository';
export * from './ledger-book';
export * from './balance-samples.repository';
export * from './statements.repository';
