import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CatalogChangesRepository } from '@cardpull/orders';
import { sendPage, Session } from '../admin-http';
import type { AdminSession } from '../auth/admin-sessions.service';
import { catalogChangesView } from '../views/catalog-changes.view';

/** How many changes the page lists (the latest; the metric counts them all). */
export const CATALOG_CHANGES_LIMIT = 200;

/** /admin/catalog-changes (issue 25): the partner's catalog changes, latest first; the overview shows the latest few. */
@ApiExcludeController() // HTML for people, with cookie sessions: not part of the /v1 contract
@Controller('admin')
export class CatalogChangesController {
  constructor(private readonly changes: CatalogChangesRepository) {}

  @Get('catalog-changes')
  async list(@Res() reply: FastifyReply, @Session() session: AdminSession) {
    return sendPage(reply, catalogChangesView(await this.changes.latest(CATALOG_CHANGES_LIMIT), CATALOG_CHANGES_LIMIT, { session }));
  }
}
