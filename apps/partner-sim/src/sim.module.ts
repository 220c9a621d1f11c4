import { Module, type DynamicModule } from '@nestjs/common';
import type pino from 'pino';
import { ConfigModule, type SimConfig } from '@cardpull/config';
import { LoggerModule } from '@cardpull/logger';
import { SignatureGuard } from './auth/signature.guard';
import { CatalogController } from './catalog/catalog.controller';
import { CallbackInbox, CallbackReceiverController } from './control/callback-receiver';
import { CatalogControlController } from './control/catalog-control.controller';
import { ControlController } from './control/control.controller';
import { HealthController } from './control/health.controller';
import { FaultRegistry } from './faults/fault-registry';
import { ResponderService } from './faults/responder.service';
import { CardsController } from './pulls/cards.controller';
import { PullRequestsController } from './pulls/pull-requests.controller';
import { PullRequestsService } from './pulls/pull-requests.service';
import { SyncPullsService } from './pulls/sync-pulls.service';
import { SchedulerService } from './state/scheduler.service';
import { SimStateService } from './state/sim-state.service';

@Module({})
export class SimModule {
  static forRoot(config: SimConfig, opts: { logStream?: pino.DestinationStream } = {}): DynamicModule {
    return {
      module: SimModule,
      imports: [
        ConfigModule.forSim(config),
        // nestjs-pino keeps one pino-http instance per process, built by the first app that asks: a silent
        // simulator started in-process by a test must not become the logger of the app under test.
        ...(config.LOG_LEVEL === 'silent'
          ? []
          : [LoggerModule.forRoot({ name: 'partner-sim', level: config.LOG_LEVEL, stream: opts.logStream })]),
      ],
      controllers: [
        CatalogController,
        CardsController,
        PullRequestsController,
        HealthController,
        // SIM_CONTROL off: no route under /_sim but health, so /_sim/* answers 404; no callback receiver either.
        ...(config.SIM_CONTROL ? [ControlController, CatalogControlController, CallbackReceiverController] : []),
      ],
      providers: [
        SimStateService,
        SchedulerService,
        FaultRegistry,
        ResponderService,
        SyncPullsService,
        PullRequestsService,
        SignatureGuard,
        CallbackInbox,
      ],
    };
  }
}
