// The order aggregate, by what each part does (docs/ARCHITECTURE.md, "Rooms"): the shared vocabulary,
// the writes, the queues, the callbacks' outbox, the reads, the operators' maintenance, the partner's state.
export * from './model';
export * from './write';
export * from './queue';
export * from './callbacks';
export * from './read';
export * from './maintenance';
export * from './partner';
export * from './ledger';
export * from './orders.module';
