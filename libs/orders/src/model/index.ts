export * from './attempt-facts';
export * from './ids';
export * from './order-steps';
export * from './order.types';
export * from './timings';
