export * from './card-reveal.repository';
export * from './charts.repository';
export * from './operations.repository';
export * from './order-filter';
export * from './order-reads.repository';
export * from './order-view';
export * from './read-models';
export * from './reports.repository';
