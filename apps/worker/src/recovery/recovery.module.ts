import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL, TaskLeases } from '@cardpull/db';
import { PartnerStatusModule } from '@cardpull/ops';
import { OrdersCoreModule } from '@cardpull/orders';
import { StepsModule } from '../steps/steps.module';
import { BalanceWatch } from './balance-watch.service';
import { BulkRunner } from './bulk-runner.service';
import { CatalogRefresh } from './catalog-refresh';
import { CircuitProbe } from './circuit-probe.service';
import { PollAger } from './poll-ager.service';
import { Reconciler } from './reconciler.service';
import { Retention } from './retention.service';
import { Sweeper } from './sweeper.service';

const TASKS = [Sweeper, Reconciler, CircuitProbe, BalanceWatch, CatalogRefresh, PollAger, Retention, BulkRunner];

/** The fleet's claims on the tasks' runs: each task runs once per interval across every worker. */
const LEASES = { provide: TaskLeases, inject: [PG_POOL, SERVICE_CONFIG], useFactory: (pool: Pool, config: ServiceConfig) => new TaskLeases(pool, config.PERIODIC_TASK_LEASE_MS) };

/** The worker's periodic tasks (each a PeriodicTask): what repairs, re-checks and watches without a job. */
@Module({
  imports: [OrdersCoreModule, StepsModule, PartnerStatusModule],
  providers: [...TASKS, LEASES],
  exports: TASKS,
})
export class RecoveryModule {}
