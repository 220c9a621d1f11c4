// The partner simulator's control API as a contract: what tests, the chaos run and the benchmarks send to
// it (faults) and read from it (state, ledger), shared by apps/partner-sim and libs/testing without either
// importing the other.
export * from './fault-spec';
export * from './ledger';
export * from './views';
export * from './limits';
export * from './clock';
export * from './catalog';
export * from './readings';
