import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { MetricsModule } from '@cardpull/ops';
import { DecisionApplier } from './decision-applier.service';
import { PartnerConditions } from './partner-conditions';
import { StepRunner } from './step-runner';

/** One step of an order: lease it, call the partner, decide (decision/), apply the transition. */
@Module({
  imports: [OrdersCoreModule, MetricsModule],
  providers: [DecisionApplier, PartnerConditions, StepRunner],
  exports: [DecisionApplier, PartnerConditions, StepRunner],
})
export class StepsModule {}
