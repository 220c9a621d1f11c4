import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import type { Queue } from 'bullmq';
import { OPERATOR_QUEUES, OrdersCoreModule } from '@cardpull/orders';
import { CatalogModule } from '../catalog/catalog.module';
import { AdminAuthController } from './auth/admin-auth.controller';
import { installAdminGuard } from './auth/admin-guard';
import { BulkController } from './bulk/bulk.controller';
import { AdminLogin } from './auth/admin-login.service';
import { AdminSessions } from './auth/admin-sessions.service';
import { RevokedSessionsRepository } from './auth/revoked-sessions.repository';
import { mountJobDashboard } from './job-dashboard';
import { CatalogChangesController } from './operations/catalog-changes.controller';
import { OperationsController } from './operations/operations.controller';
import { OperationsService } from './operations/operations.service';
import { PartnerPanel } from './operations/partner-panel.service';
import { AdminActions } from './orders/admin-actions.service';
import { CardRevealController } from './orders/card-reveal.controller';
import { CardReveals } from './orders/card-reveal.service';
import { OrderInspector } from './orders/order-inspector.service';

/**
 * The operators' surface under /admin: login (ADMIN_USERS), the operations page, the order page with
 * re-drive / mark failed and the reveal of a card kept for a refund, and the job dashboard (bull-board) at
 * /admin/queues. Server-rendered HTML, no front-end build. Its forms post application/x-www-form-urlencoded, which Nest's Fastify adapter already
 * parses (fast-querystring, __proto__ refused) for every route; @fastify/formbody would be a second parser
 * for the same type (Fastify refuses that), so none is added and the /v1 API's parsing is untouched.
 */
@Module({
  imports: [OrdersCoreModule, CatalogModule],
  controllers: [AdminAuthController, OperationsController, BulkController, CardRevealController, CatalogChangesController],
  providers: [AdminSessions, RevokedSessionsRepository, AdminLogin, OperationsService, PartnerPanel, OrderInspector, AdminActions, CardReveals],
})
export class AdminModule implements OnModuleInit {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'ADMIN_READ_ONLY'>,
    private readonly adapterHost: HttpAdapterHost,
    private readonly sessions: AdminSessions,
    private readonly revoked: RevokedSessionsRepository,
    @Inject(OPERATOR_QUEUES) private readonly queues: Queue[],
  ) {}

  /** Fastify-level pieces, added before the server is ready: the guard first, so the dashboard inherits it. */
  onModuleInit(): void {
    const instance = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!instance) return; // an application context without HTTP (nothing to guard)
    installAdminGuard(instance, this.sessions, this.revoked);
    mountJobDashboard(instance, this.queues, this.sessions, this.config.ADMIN_READ_ONLY);
  }
}
