import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { CallbackDeliverer } from './callback-deliverer.service';

/** Delivery of the callback outbox to the callers' URLs. */
@Module({
  imports: [OrdersCoreModule],
  providers: [CallbackDeliverer],
  exports: [CallbackDeliverer],
})
export class CallbacksModule {}
