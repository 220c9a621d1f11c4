export * from './catalog-changes.repository';
export * from './catalog-diff';
export * from './catalog-source';
export * from './catalog.repository';
export * from './partner-circuit';
export * from './partner-errors';
export * from './partner-snapshots';
export * from './partner-state.repository';
