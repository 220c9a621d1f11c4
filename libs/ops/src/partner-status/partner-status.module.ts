import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { PartnerStatus } from './partner-status.service';

/**
 * The partner's state for health, metrics and the balance watch, over the app's own PartnerSnapshots and
 * PartnerCircuit (OrdersCoreModule is a static module: this is the same instance the app imports).
 */
@Module({
  imports: [OrdersCoreModule],
  providers: [PartnerStatus],
  exports: [PartnerStatus],
})
export class PartnerStatusModule {}
