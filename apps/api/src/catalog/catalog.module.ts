import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { CatalogController } from './catalog.controller';
import { CatalogService } from './catalog.service';

/** GET /v1/gift-cards...: the partner's catalog as the API validates orders against it (CatalogService, one instance). */
@Module({
  imports: [OrdersCoreModule],
  controllers: [CatalogController],
  providers: [CatalogService],
  exports: [CatalogService],
})
export class CatalogModule {}
