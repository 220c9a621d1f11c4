import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
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
