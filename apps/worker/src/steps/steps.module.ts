import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { MetricsModule } from '@cardpull/ops';
import { DecisionApplier } from './decision-applier.service';
import { PartnerAsk } from './partner-ask.service';
import { PartnerConditions } from './partner-conditions';
import { StepRunner } from './step-runner';
import { LeaseKeeper } from './lease-keeper';

/** One step of an order: lease it, ask the partner, decide (decision/), apply the transition (PartnerAsk). */
@Module({
  imports: [OrdersCoreModule, MetricsModule],
  providers: [DecisionApplier, PartnerAsk, PartnerConditions, StepRunner, LeaseKeeper],
  exports: [DecisionApplier, PartnerAsk, PartnerConditions, StepRunner, LeaseKeeper],
})
export class StepsModule {}
