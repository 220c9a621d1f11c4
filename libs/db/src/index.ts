export * from './db.module';
export * from './preflight';
export * from './prisma.service';
export * from './transaction';
export { Prisma } from './generated/client';
export type { Attempt, Card, CatalogGiftCard, Order, OrderEvent } from './generated/client';
export { AttemptState, CardRole, OrderStatus, OrderStep, PullMode } from './generated/enums';
