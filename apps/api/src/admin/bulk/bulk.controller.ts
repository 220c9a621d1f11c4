import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { BULK_ACTIONS, BULK_MAX_ORDERS, BulkActionsRepository, OperationsRepository, bulkTarget, filterQuery, isEmptyFilter, parseOrderFilter, type BulkActionKind, type OrderFilter } from '@cardpull/orders';
import { ApiError } from '@cardpull/platform';
import { field, sendPage, Session } from '../admin-http';
import { AdminSessions, type AdminRequest, type AdminSession } from '../auth/admin-sessions.service';
import { isUuid } from '../../orders/order-input';
import { bulkDryRunView, bulkProgressView } from '../views/bulk.view';
import { notFoundView } from '../views/order.view';

const SAMPLE = 50;

/** A filter of nothing but statuses takes every order in needs attention: run only when the operator confirms that (`every=yes`). */
const selectsEveryOrder = (f: OrderFilter): boolean => isEmptyFilter({ ...f, statuses: [] });
const MAX_REASON = 500;

/**
 * Filtered bulk actions: a dry run first (GET /admin/bulk?action=...&<filter>: which orders, nothing
 * changed), then POST /admin/bulk starts it (admins only, CSRF-checked; a filter of statuses alone, which
 * takes every order in needs attention, only with the dry run's confirmation box ticked): the
 * orders the filter selects at that moment are fixed, and the worker applies the action a few a second
 * (BulkRunner), each order with its own audit entry naming the bulk action. GET /admin/bulk/:id shows the
 * progress, /admin/api/bulk/:id the same as JSON.
 */
@ApiExcludeController()
@Controller('admin')
export class BulkController {
  constructor(
    private readonly bulk: BulkActionsRepository,
    private readonly reads: OperationsRepository,
    private readonly sessions: AdminSessions,
  ) {}

  @Get('bulk')
  async dryRun(@Res() reply: FastifyReply, @Session() session: AdminSession, @Query() query: Record<string, unknown>) {
    const { action: rawAction, ...filterQueryParams } = query ?? {};
    const action = typeof rawAction === 'string' && (BULK_ACTIONS as readonly string[]).includes(rawAction) ? (rawAction as BulkActionKind) : null;
    const parsed = parseOrderFilter(filterQueryParams);
    const refused = !action ? `Choose an action: ${BULK_ACTIONS.join(' or ')}` : parsed.errors.length ? parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; ') : null;
    // The dry run lists exactly what a run would take: the same target for the count and the sample.
    const target = refused ? null : bulkTarget(parsed.filter);
    const eligible = await this.bulk.eligible(target, BULK_MAX_ORDERS);
    const sample = target ? (await this.reads.filterOrders(target, undefined, SAMPLE)).orders : [];
    const every = !!target && selectsEveryOrder(parsed.filter);
    const view = bulkDryRunView({ action: action ?? '', parsed, query: filterQuery(parsed.filter), eligible, sample, refused, every }, { session });
    return sendPage(reply, view, refused ? 400 : 200);
  }

  @Post('bulk')
  async start(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Body() body: unknown) {
    if (!session.canAct) throw new ApiError(403, 'read_only', 'Read-only: this user may look but not act');
    if (!this.sessions.csrfValid(session, field(body, 'csrf'))) throw new ApiError(403, 'csrf_token_invalid', 'Missing or wrong CSRF token: reload the page and try again');
    const action = field(body, 'action');
    if (!(BULK_ACTIONS as readonly string[]).includes(action)) throw new ApiError(400, 'invalid_action', `action must be ${BULK_ACTIONS.join(' or ')}`);
    const parsed = parseOrderFilter(Object.fromEntries(new URLSearchParams(field(body, 'filter'))));
    if (parsed.errors.length) throw new ApiError(400, 'invalid_filter', parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    if (selectsEveryOrder(parsed.filter) && field(body, 'every') !== 'yes') {
      throw new ApiError(400, 'empty_filter', 'This filter selects every order in needs attention: tick "every order in needs attention" on the dry run to confirm, or filter by something more');
    }
    const reason = field(body, 'reason').trim().slice(0, MAX_REASON);
    if ((action === 'mark_failed' || action === 'declare_dead') && !reason) {
      throw new ApiError(400, 'reason_required', `A reason is required to ${action === 'mark_failed' ? 'mark orders failed' : "declare their request IDs dead (the partner's word)"}`);
    }
    const orderIds = await this.bulk.eligible(bulkTarget(parsed.filter), BULK_MAX_ORDERS);
    const id = await this.bulk.create({ action: action as BulkActionKind, filter: filterQuery(parsed.filter), reason: reason || '(no reason given)', createdBy: session.user, orderIds });
    this.sessions.setFlash(req, reply, { kind: 'ok', message: `Bulk ${action.replaceAll('_', ' ')} of ${orderIds.length} orders started` });
    return reply.redirect(`/admin/bulk/${id}`, 303);
  }

  @Get('bulk/:id')
  async progress(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Param('id') id: string) {
    const b = isUuid(id) ? await this.bulk.get(id) : null;
    if (!b) return sendPage(reply, notFoundView(`No bulk action ${id}.`, { session }), 404);
    return sendPage(reply, bulkProgressView(b, { session, flash: this.sessions.takeFlash(req, reply) }));
  }

  @Get('api/bulk/:id')
  async progressJson(@Res() reply: FastifyReply, @Param('id') id: string) {
    const b = isUuid(id) ? await this.bulk.get(id) : null;
    if (!b) return reply.status(404).send({ errors: [{ code: 'not_found', message: `No bulk action ${id}` }], status: 'not_found' });
    return reply.send({ id: b.id, action: b.action, filter: b.filter, reason: b.reason, created_by: b.createdBy, created_at: b.createdAt, state: b.state, total: b.total, position: b.position, applied: b.applied, skipped: b.skipped, finished_at: b.finishedAt });
  }
}
