import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiError } from '@cardpull/platform';
import { field, sendPage, Session } from '../admin-http';
import { ADMIN_HOME } from '../auth/admin-guard';
import { AdminSessions, type AdminRequest, type AdminSession } from '../auth/admin-sessions.service';
import { isUuid } from '../../orders/order-input';
import { AdminActions } from '../orders/admin-actions.service';
import { OrderInspector } from '../orders/order-inspector.service';
import { errorsView, operationsView, searchView } from '../views/operations.view';
import { notFoundView, orderView } from '../views/order.view';
import { ordersFilterView } from '../views/orders-filter.view';
import { CHART_RANGES, ChartsRepository, LedgerBook, LedgerRepository, StatementsRepository, filterQuery, parseOrderFilter, statementCsv, type ChartRange } from '@cardpull/orders';
import { parseStatementDate } from '../../statements/statements.controller';
import { chartsView } from '../views/charts.view';
import { OperationsService } from './operations.service';

const MAX_REASON = 500;

/** The operations page, search, the order page, the two actions on needs_attention orders, and a dispute. */
@ApiExcludeController() // HTML for people, with cookie sessions: not part of the /v1 contract
@Controller('admin')
export class OperationsController {
  constructor(
    private readonly operations: OperationsService,
    private readonly inspector: OrderInspector,
    private readonly actions: AdminActions,
    private readonly sessions: AdminSessions,
    private readonly chartsRepo: ChartsRepository,
    private readonly ledger: LedgerRepository,
    private readonly statementsRepo: StatementsRepository,
    private readonly ledgerBook: LedgerBook,
  ) {}

  @Get()
  async home(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession) {
    const model = await this.operations.overview();
    return sendPage(reply, operationsView(model, { session, flash: this.sessions.takeFlash(req, reply) }));
  }

  /** Every cause of failure and kind of partner error (the overview lists the latest few), and the latest partner errors. */
  @Get('errors')
  async errors(@Res() reply: FastifyReply, @Session() session: AdminSession) {
    return sendPage(reply, errorsView(await this.operations.errors(), { session }));
  }

  @Get('search')
  async search(@Res() reply: FastifyReply, @Session() session: AdminSession, @Query('q') q: unknown) {
    const query = typeof q === 'string' ? q.trim() : '';
    const hits = await this.inspector.search(query);
    if (hits.length === 1) return reply.redirect(`/admin/orders/${hits[0]!.id}`, 303);
    return sendPage(reply, searchView(query, hits, { session }));
  }

  /** Charts over the last hour, day or week (?range=), drawn as SVG from Postgres. */
  @Get('charts')
  async charts(@Res() reply: FastifyReply, @Session() session: AdminSession, @Query('range') range: unknown) {
    const r: ChartRange = typeof range === 'string' && range in CHART_RANGES ? (range as ChartRange) : 'hour';
    const [buckets, open, money] = await Promise.all([this.chartsRepo.series(r), this.chartsRepo.openAges(), this.chartsRepo.money(r)]);
    return sendPage(reply, chartsView(r, buckets, open, { session }, money));
  }

  /** Orders by filter (status, client, gift card, mode, time range, error code, metadata key:value), a page at a time. */
  @Get('orders')
  async orders(@Res() reply: FastifyReply, @Session() session: AdminSession, @Query() query: Record<string, unknown>) {
    const parsed = parseOrderFilter(query ?? {});
    const result = parsed.errors.length ? null : await this.inspector.filter(parsed);
    return sendPage(reply, ordersFilterView(parsed, result, { session }), parsed.errors.length ? 400 : 200);
  }

  /** The same filter as JSON, for scripts (with the admin session cookie of POST /admin/login). */
  @Get('api/orders')
  async ordersJson(@Res() reply: FastifyReply, @Query() query: Record<string, unknown>) {
    const parsed = parseOrderFilter(query ?? {});
    if (parsed.errors.length) return reply.status(400).send({ errors: parsed.errors.map((e) => ({ code: 'invalid_filter', field: e.field, message: e.message })), status: 'bad_request' });
    const { orders, more } = await this.inspector.filter(parsed);
    const next = more && orders.length ? `/admin/api/orders?${filterQuery(parsed.filter, { after: orders.at(-1)!.id, limit: String(parsed.limit) })}` : null;
    return reply.send({
      orders: orders.map((o) => ({
        id: o.id, status: o.status, client: o.client, mode: o.mode, gift_card_code: o.giftCardCode, amount: o.amount,
        created_at: o.createdAt, updated_at: o.updatedAt, error_code: o.errorCode, error_message: o.errorMessage, metadata: o.metadata,
      })),
      next,
    });
  }

  @Get('orders/:id')
  async order(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Param('id') id: string) {
    const model = await this.inspector.page(id);
    if (!model) return sendPage(reply, notFoundView(`No order ${id}.`, { session }), 404);
    return sendPage(reply, orderView(model, { session, flash: this.sessions.takeFlash(req, reply) }));
  }

  /** Re-drive with the same request ID; the reason is optional and goes to the audit trail. */
  @Post('orders/:id/redrive')
  redrive(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Param('id') id: string, @Body() body: unknown) {
    return this.act(req, reply, session, id, body, 'redrive');
  }

  /** Mark failed: the reason is required (it becomes the order's error and the audit entry's why). */
  @Post('orders/:id/mark-failed')
  markFailed(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Param('id') id: string, @Body() body: unknown) {
    return this.act(req, reply, session, id, body, 'mark-failed');
  }

  /** Declare the order's open request ID dead (invariant 2: the operator's word, after asking the partner); the reason is required. */
  @Post('orders/:id/declare-dead')
  declareDead(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Param('id') id: string, @Body() body: unknown) {
    return this.act(req, reply, session, id, body, 'declare-dead');
  }

  /** Dispute: the order's card secrets outlive RETENTION_SECRETS_DAYS; the reason is required. */
  @Post('orders/:id/dispute')
  dispute(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Param('id') id: string, @Body() body: unknown) {
    return this.act(req, reply, session, id, body, 'dispute');
  }

  /** Every client's daily statement as CSV (the operations page's download; ?date=YYYY-MM-DD, UTC, default today). */
  @Get('statements')
  async statements(@Res() reply: FastifyReply, @Query('date') date: unknown) {
    const day = parseStatementDate(date === undefined || date === '' ? new Date().toISOString().slice(0, 10) : date);
    const csv = statementCsv(day, await this.statementsRepo.daily(day, null));
    return reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="cardpull-statement-${day}.csv"`).send(csv);
  }

  /**
   * An operator's ledger movement (issue 24): a top-up the partner confirmed, or an adjustment (either sign),
   * in currency units with a reason; written with the operator's name (the ledger is its own audit trail).
   */
  @Post('ledger/movements')
  async ledgerMovement(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Body() body: unknown) {
    if (!session.canAct) throw new ApiError(403, 'read_only', 'Read-only: this user may look but not act');
    if (!this.sessions.csrfValid(session, field(body, 'csrf'))) {
      throw new ApiError(403, 'csrf_token_invalid', 'Missing or wrong CSRF token: reload the page and try again');
    }
    const done = (kind: 'ok' | 'error', message: string) => {
      this.sessions.setFlash(req, reply, { kind, message });
      return reply.redirect(`${ADMIN_HOME}#money`, 303);
    };
    const kind = field(body, 'kind');
    const amountText = field(body, 'amount').trim();
    const reason = field(body, 'reason').trim().slice(0, MAX_REASON);
    if (kind !== 'top_up' && kind !== 'adjustment') return done('error', 'Nothing recorded: choose a top-up or an adjustment');
    if (!/^-?\d{1,10}(\.\d{1,2})?$/.test(amountText) || Number(amountText) === 0) return done('error', `Nothing recorded: ${JSON.stringify(amountText)} is not a nonzero amount with at most 2 decimals`);
    if (kind === 'top_up' && Number(amountText) < 0) return done('error', 'Nothing recorded: a top-up is positive (record a negative adjustment instead)');
    if (!reason) return done('error', 'Nothing recorded: a reason is required (the partner\'s confirmation, a ticket)');
    const minor = Math.round(Number(amountText) * 100);
    const book = await this.ledgerBook.current();
    await this.ledger.operatorMovement({ kind, amount: minor, reason, actor: `admin:${session.user}`, ...book });
    return done('ok', `Recorded: ${kind === 'top_up' ? 'a top-up' : 'an adjustment'} of ${amountText} ${book.currency} (${reason})`);
  }

  private async act(req: AdminRequest, reply: FastifyReply, session: AdminSession, id: string, body: unknown, action: 'redrive' | 'mark-failed' | 'declare-dead' | 'dispute') {
    if (!session.canAct) throw new ApiError(403, 'read_only', 'Read-only: this user may look but not act');
    if (!this.sessions.csrfValid(session, field(body, 'csrf'))) {
      throw new ApiError(403, 'csrf_token_invalid', 'Missing or wrong CSRF token: reload the page and try again');
    }
    const back = field(body, 'back') === ADMIN_HOME || !isUuid(id) ? ADMIN_HOME : `/admin/orders/${id}`;
    const reason = field(body, 'reason').trim().slice(0, MAX_REASON);
    const done = (kind: 'ok' | 'error', message: string) => {
      this.sessions.setFlash(req, reply, { kind, message });
      return reply.redirect(back, 303);
    };
    if (!isUuid(id)) return done('error', `No order ${id}`);
    if (action === 'mark-failed' && !reason) return done('error', `Order ${id} was not changed: a reason is required to mark it failed`);
    if (action === 'declare-dead' && !reason) return done('error', `Order ${id} was not changed: a reason is required to declare its request ID dead (what the partner said)`);
    if (action === 'dispute' && !reason) return done('error', `Order ${id} was not changed: a reason is required to mark it disputed`);
    try {
      if (action === 'dispute') {
        await this.actions.dispute(id, session.user, reason);
        return done('ok', `Order ${id} marked disputed: its card secrets are kept past the retention`);
      }
      if (action === 'redrive') {
        const r = await this.actions.redrive(id, session.user, reason || '(no reason given)');
        return done('ok', r.newRequestId ? `Order ${id} re-driven with a new request ID ${r.newRequestId}` : `Order ${id} re-driven with the same request ID`);
      }
      if (action === 'declare-dead') {
        await this.actions.declareDead(id, session.user, reason);
        return done('ok', `Order ${id}: its request ID is declared dead and no longer sent; re-drive to pull with a new one, or mark it failed`);
      }
      await this.actions.markFailed(id, session.user, reason);
      return done('ok', `Order ${id} marked failed`);
    } catch (error) {
      // 404 no such order, 409 not needs_attention any more, being asked right now, or changed meanwhile: tell the operator.
      if (error instanceof ApiError) return done('error', error.message);
      throw error;
    }
  }
}
