export * from './ledger.repository';
