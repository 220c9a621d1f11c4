import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { CatalogModule } from '../catalog/catalog.module';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';

/** POST /v1/orders and the order reads: intake with idempotency keys, and the Order resource. */
@Module({
  imports: [OrdersCoreModule, CatalogModule],
  controllers: [OrdersController],
  providers: [OrdersService],
})
export class OrdersModule {}
