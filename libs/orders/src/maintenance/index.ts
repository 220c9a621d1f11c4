export * from './bulk-actions.repository';
export * from './card-keys.repository';
export * from './operator-actions';
export * from './retention.repository';
