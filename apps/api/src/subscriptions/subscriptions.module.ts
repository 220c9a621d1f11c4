import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { SubscriptionsController } from './subscriptions.controller';

/** /v1/subscriptions: a client's subscriptions to catalog.changed (issue 25). */
@Module({
  imports: [OrdersCoreModule],
  controllers: [SubscriptionsController],
})
export class SubscriptionsModule {}
