import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { CALLBACKS_QUEUE, ORDERS_QUEUE } from '@cardpull/queue';
import { CallbackDeliverer, CallbackQueue, CallbacksRepository, CallbacksWorker } from './callbacks';
import { AdminActions } from './admin-actions.service';
import { PartnerCircuit } from './circuit.service';
import { PartnerErrors, PartnerSnapshots } from './partner-watch';
import { CircuitProbe } from './circuit-probe.service';
import { OrderQueue } from './order-queue.service';
import { OrderSteps } from './order-steps.service';
import { OrdersRepository } from './orders.repository';
import { OrdersWorker } from './orders-worker.service';
import { Reconciler } from './reconciler.service';
import { DecisionApplier } from './decision-applier.service';
import { PartnerConditions } from './partner-conditions';
import { TransitionsRepository } from './transitions.repository';
import { StepsRepository } from './steps.repository';
import { Sweeper } from './sweeper.service';

/** What both the API and the worker need: the order repositories, the queue, the circuit state. */
@Module({
  imports: [BullModule.registerQueue({ name: ORDERS_QUEUE }, { name: CALLBACKS_QUEUE })],
  providers: [OrdersRepository, StepsRepository, TransitionsRepository, OrderQueue, PartnerCircuit, CallbackQueue, CallbacksRepository, AdminActions, PartnerErrors, PartnerSnapshots],
  exports: [PartnerErrors, PartnerSnapshots, OrdersRepository, StepsRepository, TransitionsRepository, OrderQueue, PartnerCircuit, CallbackQueue, CallbacksRepository, AdminActions, BullModule],
})
export class OrdersCoreModule {}

/** The worker's side: step handlers, the BullMQ worker, the sweeper and the circuit probe. */
@Module({
  imports: [OrdersCoreModule],
  providers: [DecisionApplier, PartnerConditions, OrderSteps, OrdersWorker, Sweeper, CircuitProbe, CallbackDeliverer, CallbacksWorker, Reconciler],
  exports: [OrderSteps, OrdersWorker, Sweeper, CircuitProbe, CallbackDeliverer, Reconciler],
})
export class OrdersWorkerModule {}
