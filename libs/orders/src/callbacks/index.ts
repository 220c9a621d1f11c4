export * from './callback-queue.service';
export * from './callback-signature';
export * from './callbacks.repository';
export * from './subscriptions.repository';
