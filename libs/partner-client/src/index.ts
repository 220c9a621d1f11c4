export * from './amounts';
export * from './classify';
export * from './outcome';
export * from './partner-client';
export * from './retry-after';
export * from './signature';
export * from './types';
export * from './partner.module';
