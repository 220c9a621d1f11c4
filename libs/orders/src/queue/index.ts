export * from './order-queue.service';
export * from './queue-priorities';
