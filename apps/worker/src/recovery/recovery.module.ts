import { Module } from '@nestjs/common';
import { PartnerStatusModule } from '@cardpull/ops';
import { OrdersCoreModule } from '@cardpull/orders';
import { StepsModule } from '../steps/steps.module';
import { BalanceWatch } from './balance-watch.service';
import { CatalogRefresh } from './catalog-refresh';
import { CircuitProbe } from './circuit-probe.service';
import { PollAger } from './poll-ager.service';
import { Reconciler } from './reconciler.service';
import { Sweeper } from './sweeper.service';

const TASKS = [Sweeper, Reconciler, CircuitProbe, BalanceWatch, CatalogRefresh, PollAger];

/** The worker's periodic tasks (each a PeriodicTask): what repairs, re-checks and watches without a job. */
@Module({
  imports: [OrdersCoreModule, StepsModule, PartnerStatusModule],
  providers: TASKS,
  exports: TASKS,
})
export class RecoveryModule {}
