import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { CALLBACKS_QUEUE, ORDERS_QUEUE } from '@cardpull/queue';
import { CallbackQueue, CallbacksRepository, SubscriptionsRepository } from './callbacks';
import { BulkActionsRepository, OperatorActions, RetentionRepository } from './maintenance';
import { CatalogChangesRepository, CatalogRepository, CatalogSource, PartnerCircuit, PartnerErrors, PartnerSnapshots, PartnerStateRepository } from './partner';
import { BalanceSamplesRepository, LedgerBook, LedgerRepository, StatementsRepository } from './ledger';
import { CardRevealRepository, ChartsRepository, OperationsRepository, OrderReads } from './read';
import { OrderQueue } from './queue';
import { AfterCommit, IntakeRepository, StepsRepository, TransitionsRepository } from './write';

/**
 * The raw BullMQ queues, for the job dashboard only (bull-board drives them itself): every other user goes
 * through OrderQueue's and CallbackQueue's verbs.
 */
export const OPERATOR_QUEUES = Symbol('OPERATOR_QUEUES');

/** Each part's providers, in the order of the floors: the writes, the queues, the reads, maintenance, the partner. */
const PARTS = {
  write: [IntakeRepository, StepsRepository, TransitionsRepository, AfterCommit],
  queue: [OrderQueue, CallbackQueue, CallbacksRepository, SubscriptionsRepository],
  read: [OrderReads, OperationsRepository, ChartsRepository, CardRevealRepository],
  maintenance: [OperatorActions, RetentionRepository, BulkActionsRepository],
  partner: [PartnerStateRepository, PartnerCircuit, PartnerErrors, PartnerSnapshots, CatalogRepository, CatalogChangesRepository, CatalogSource],
  ledger: [LedgerRepository, LedgerBook, BalanceSamplesRepository, StatementsRepository],
};

const PROVIDERS = [
  ...Object.values(PARTS).flat(),
  { provide: OPERATOR_QUEUES, useFactory: (orders: Queue, callbacks: Queue) => [orders, callbacks], inject: [getQueueToken(ORDERS_QUEUE), getQueueToken(CALLBACKS_QUEUE)] },
];

/**
 * The order aggregate for both apps: its writes (every statement that changes an order), its two queues
 * with the callbacks' outbox, its reads, the operators' maintenance, and the partner's state kept in
 * Postgres (circuit, errors, snapshots, catalog). One static module: every importer shares one instance of
 * each, and the parts depend on one another only downwards (floors.json, "rooms").
 */
@Module({
  imports: [BullModule.registerQueue({ name: ORDERS_QUEUE }, { name: CALLBACKS_QUEUE })],
  providers: PROVIDERS,
  exports: [...PROVIDERS, BullModule],
})
export class OrdersCoreModule {}
