import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { CALLBACKS_QUEUE, ORDERS_QUEUE } from '@cardpull/queue';
import { AfterCommit } from './after-commit';
import { CallbackQueue, CallbacksRepository } from './callbacks';
import { CardRevealRepository } from './card-reveal.repository';
import { OrderQueue } from './order-queue.service';
import { OrdersRepository } from './orders.repository';
import { OperationsRepository } from './read/operations.repository';
import { RetentionRepository } from './retention.repository';
import { OperatorActions } from './operator-actions';
import { BulkActionsRepository } from './bulk-actions.repository';
import { ChartsRepository } from './read/charts.repository';
import { CatalogRepository } from './partner/catalog.repository';
import { CatalogSource } from './partner/catalog-source';
import { PartnerCircuit } from './partner/partner-circuit';
import { PartnerErrors } from './partner/partner-errors';
import { PartnerSnapshots } from './partner/partner-snapshots';
import { PartnerStateRepository } from './partner/partner-state.repository';
import { StepsRepository } from './steps.repository';
import { TransitionsRepository } from './transitions.repository';

/**
 * The raw BullMQ queues, for the job dashboard only (bull-board drives them itself): every other user goes
 * through OrderQueue's and CallbackQueue's verbs.
 */
export const OPERATOR_QUEUES = Symbol('OPERATOR_QUEUES');

const PROVIDERS = [
  OrdersRepository,
  StepsRepository,
  TransitionsRepository,
  CallbacksRepository,
  OperationsRepository,
  CardRevealRepository,
  RetentionRepository,
  OperatorActions,
  BulkActionsRepository,
  ChartsRepository,
  OrderQueue,
  CallbackQueue,
  AfterCommit,
  PartnerStateRepository,
  PartnerCircuit,
  PartnerErrors,
  PartnerSnapshots,
  CatalogRepository,
  CatalogSource,
  { provide: OPERATOR_QUEUES, useFactory: (orders: Queue, callbacks: Queue) => [orders, callbacks], inject: [getQueueToken(ORDERS_QUEUE), getQueueToken(CALLBACKS_QUEUE)] },
];

/**
 * The order aggregate for both apps: the repositories (every statement on the order tables), the two
 * queues and the after-commit helper, and the partner's state kept in Postgres (circuit, errors, snapshots,
 * catalog). A static module: every importer shares one instance of each.
 */
@Module({
  imports: [BullModule.registerQueue({ name: ORDERS_QUEUE }, { name: CALLBACKS_QUEUE })],
  providers: PROVIDERS,
  exports: [...PROVIDERS, BullModule],
})
export class OrdersCoreModule {}
