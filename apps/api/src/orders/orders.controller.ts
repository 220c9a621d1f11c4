import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import { ORDER_STATUSES, OrderReads, toOrderView } from '@cardpull/orders';
import { ApiError, ApiKeyGuard, ClientThrottlerGuard, type AuthedRequest, RequireScope, traceIdOf, withSpan } from '@cardpull/platform';
import { Vault } from '@cardpull/vault';
import { CreateOrderDocs, GetOrderByKeyDocs, GetOrderDocs, ListOrdersDocs, OrdersDocs } from '../docs/orders.docs';
import { isIdempotencyKey, isUuid, parseCreateOrder, parseIdempotencyKey, parseWait, requireJson } from './order-input';
import { OrdersService } from './orders.service';

const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');
const idOfCursor = (cursor: string) => {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isUuid(id)) throw new ApiError(400, 'invalid_request', 'cursor is not one this API returned');
  return id;
};

/** Set when `?wait=` was not honoured because the client has LONG_POLLS_PER_CLIENT waits under way: poll again later. */
export const WAIT_CAPPED_HEADER = 'x-cardpull-wait-capped';

@Controller('v1/orders')
@UseGuards(ApiKeyGuard, ClientThrottlerGuard)
@OrdersDocs()
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly reads: OrderReads,
    private readonly vault: Vault,
    private readonly log: PinoLogger,
  ) {}

  @Post()
  @RequireScope('orders:write')
  @HttpCode(202)
  @CreateOrderDocs()
  async create(
    @Req() req: AuthedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Headers('idempotency-key') idempotencyKey: unknown,
    @Headers('content-type') contentType: unknown,
    @Body() body: unknown,
    @Query('wait') wait: unknown,
  ) {
    requireJson(contentType);
    const key = parseIdempotencyKey(idempotencyKey);
    const input = parseCreateOrder(body);
    const seconds = parseWait(wait);
    const { created, detail } = await withSpan('POST /v1/orders', { 'cardpull.client': req.apiClient.client, 'cardpull.mode': input.mode }, async (span) => {
      const r = await this.orders.create(req.apiClient, key, input);
      span.setAttributes({ 'cardpull.order_id': r.detail.order.id, 'cardpull.created': r.created });
      // The request's own log line (written once it is answered, after this span) names the trace too.
      const traceId = traceIdOf(span);
      if (traceId) this.log.assign({ trace_id: traceId });
      return r;
    });
    if (!created) void reply.status(200);
    const waited = await this.orders.waitForTerminal(detail.order.id, req.apiClient.client, seconds, detail);
    if (waited.capped) void reply.header(WAIT_CAPPED_HEADER, 'true');
    return { order: toOrderView(waited.detail, this.vault, req.apiClient.scopes.has('cards:read')) };
  }

  /** For a caller that lost our answer to its POST: its own order by its own Idempotency-Key. */
  @Get('by-idempotency-key/:key')
  @RequireScope('orders:read')
  @GetOrderByKeyDocs()
  async getByKey(@Req() req: AuthedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('key') key: string, @Query('wait') wait: unknown) {
    if (!isIdempotencyKey(key)) throw new ApiError(400, 'idempotency_key_invalid', 'The key must be 1-255 visible ASCII characters (URL-encoded in the path)');
    const seconds = parseWait(wait);
    const detail = await this.orders.getByKey(key, req.apiClient.client);
    const waited = await this.orders.waitForTerminal(detail.order.id, req.apiClient.client, seconds, detail);
    if (waited.capped) void reply.header(WAIT_CAPPED_HEADER, 'true');
    return { order: toOrderView(waited.detail, this.vault, req.apiClient.scopes.has('cards:read')) };
  }

  @Get(':id')
  @RequireScope('orders:read')
  @GetOrderDocs()
  async get(@Req() req: AuthedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string, @Query('wait') wait: unknown) {
    const seconds = parseWait(wait);
    const detail = await this.orders.get(id, req.apiClient.client);
    const waited = await this.orders.waitForTerminal(id, req.apiClient.client, seconds, detail);
    if (waited.capped) void reply.header(WAIT_CAPPED_HEADER, 'true');
    return { order: toOrderView(waited.detail, this.vault, req.apiClient.scopes.has('cards:read')) };
  }

  @Get()
  @RequireScope('orders:read')
  @ListOrdersDocs()
  async list(@Req() req: AuthedRequest, @Query() query: Record<string, unknown>) {
    const { status, gift_card_code: giftCardCode, limit, cursor, ...rest } = query;
    const unknown = Object.keys(rest);
    if (unknown.length) throw new ApiError(400, 'invalid_request', `Unknown query parameter(s): ${unknown.join(', ')}`);
    if (status !== undefined && !(ORDER_STATUSES as readonly unknown[]).includes(status)) {
      throw new ApiError(400, 'invalid_request', `status must be one of ${ORDER_STATUSES.join(', ')}`);
    }
    if (giftCardCode !== undefined && typeof giftCardCode !== 'string') throw new ApiError(400, 'invalid_request', 'gift_card_code must be a string');
    if (limit !== undefined && (typeof limit !== 'string' || !/^\d{1,3}$/.test(limit) || +limit < 1 || +limit > 100)) {
      throw new ApiError(400, 'invalid_request', 'limit must be an integer between 1 and 100');
    }
    if (cursor !== undefined && typeof cursor !== 'string') throw new ApiError(400, 'invalid_request', 'cursor must be a string');
    const pageSize = limit === undefined ? 20 : Number(limit);
    const rows = await this.reads.list({
      client: req.apiClient.client,
      status: status as never,
      giftCardCode: giftCardCode as string | undefined,
      beforeId: cursor ? idOfCursor(cursor as string) : undefined,
      limit: pageSize + 1,
    });
    const page = rows.slice(0, pageSize);
    const canRead = req.apiClient.scopes.has('cards:read');
    return {
      orders: page.map((d) => toOrderView(d, this.vault, canRead)),
      next_cursor: rows.length > pageSize ? cursorOf(page[page.length - 1]!.order.id) : null,
    };
  }
}
