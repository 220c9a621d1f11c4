export * from './callback-deliverer.service';
export * from './callback-queue.service';
export * from './callback-signature';
export * from './callbacks-worker.service';
export * from './callbacks.repository';
