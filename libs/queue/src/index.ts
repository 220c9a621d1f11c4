export * from './owned-queue';
export * from './priority-band';
export * from './queues';
export * from './redis';
