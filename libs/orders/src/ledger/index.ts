export * from './ledger.repository';
export * from './ledger-book';
