import { Module } from '@nestjs/common';
import { OrdersCoreModule } from '@cardpull/orders';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { StepsModule } from '../steps/steps.module';
import { CallbacksProcessor } from './callbacks.processor';
import { JOB_PROCESSORS, JobHandlers } from './job-handlers';
import { OrderStepsProcessor } from './order-steps.processor';

/** The BullMQ processors, and the start-up check that they cover the job list (JOBS) exactly once. */
@Module({
  imports: [OrdersCoreModule, StepsModule, CallbacksModule],
  providers: [
    OrderStepsProcessor,
    CallbacksProcessor,
    { provide: JOB_PROCESSORS, useFactory: (...processors: unknown[]) => processors, inject: [OrderStepsProcessor, CallbacksProcessor] },
    JobHandlers,
  ],
  exports: [OrderStepsProcessor, CallbacksProcessor],
})
export class ProcessorsModule {}
