import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders/orders.module';
import { BalanceWatch } from './balance-watch.service';
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

/**
 * The worker's low-balance watch: every BALANCE_WATCH_INTERVAL_MS it reads the cached balance and warns
 * once when it falls below LOW_BALANCE_THRESHOLD (an info when it recovers).
 */
@Module({
  imports: [PartnerStatusModule],
  providers: [BalanceWatch],
  exports: [BalanceWatch],
})
export class BalanceWatchModule {}
