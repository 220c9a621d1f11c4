import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { MetricsModule } from '@cardpull/ops';
import { CallbackDeliverer } from './callback-deliverer.service';

/** Delivery of the callback outbox to the callers' URLs. */
@Module({
  imports: [OrdersCoreModule, MetricsModule],
  providers: [CallbackDeliverer],
  exports: [CallbackDeliverer],
})
export class CallbacksModule {}
