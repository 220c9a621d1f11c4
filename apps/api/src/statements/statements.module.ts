import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { StatementsController } from './statements.controller';

/** GET /v1/statements: a client's daily statement from the ledger. */
@Module({
  imports: [OrdersCoreModule],
  controllers: [StatementsController],
})
export class StatementsModule {}
