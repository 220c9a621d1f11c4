import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { DecisionApplier } from './decision-applier.service';
import { PartnerConditions } from './partner-conditions';
import { StepRunner } from './step-runner';

/** One step of an order: lease it, call the partner, decide (decision/), apply the transition. */
@Module({
  imports: [OrdersCoreModule],
  providers: [DecisionApplier, PartnerConditions, StepRunner],
  exports: [DecisionApplier, PartnerConditions, StepRunner],
})
export class StepsModule {}
