import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL, TaskLeases } from '@cardpull/db';
import { PartnerStatusModule } from '@cardpull/ops';
import { OrdersCoreModule } from '@cardpull/orders';
import { StepsModule } from './steps/steps.module';
import { BalanceDrift } from './partner/balance-drift.service';
import { BalanceWatch } from './partner/balance-watch.service';
import { BulkRunner } from './maintenance/bulk-runner.service';
import { CatalogRefresh } from './partner/catalog-refresh';
import { CircuitProbe } from './partner/circuit-probe.service';
import { PollAger } from './traffic/poll-ager.service';
import { Reconciler } from './recovery/reconciler.service';
import { Retention } from './maintenance/retention.service';
import { Sweeper } from './recovery/sweeper.service';

const TASKS = [Sweeper, Reconciler, CircuitProbe, BalanceWatch, BalanceDrift, CatalogRefresh, PollAger, Retention, BulkRunner];

/** The fleet's claims on the tasks' runs: each task runs once per interval across every worker. */
const LEASES = { provide: TaskLeases, inject: [PG_POOL, SERVICE_CONFIG], useFactory: (pool: Pool, config: ServiceConfig) => new TaskLeases(pool, config.PERIODIC_TASK_LEASE_MS) };

/**
 * The worker's periodic tasks, each a PeriodicTask (this folder) run once per interval across the fleet
 * (TaskLeases): recovery/ repairs and asks again (sweeper, reconciler), partner/ watches the partner
 * (circuit probe, balance watch, balance drift, catalog refresh), traffic/ moves polls that waited too long (poll ager),
 * maintenance/ keeps the tables (retention, bulk actions).
 */
@Module({
  imports: [OrdersCoreModule, StepsModule, PartnerStatusModule],
  providers: [...TASKS, LEASES],
  exports: TASKS,
})
export class TasksModule {}
