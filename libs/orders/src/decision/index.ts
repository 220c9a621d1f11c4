export * from './decision.types';
export * from './decide';
export * from './resume';
