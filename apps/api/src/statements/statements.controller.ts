import { Controller, Get, Headers, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { StatementsRepository, statementCsv } from '@cardpull/orders';
import { ApiError, ApiKeyGuard, ClientThrottlerGuard, RequireScope, type AuthedRequest } from '@cardpull/platform';
import { StatementDocs } from '../docs/statements.docs';

/** A day (YYYY-MM-DD) that exists in the calendar, not in the future. */
export function parseStatementDate(date: unknown): string {
  if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) {
    throw new ApiError(400, 'invalid_request', 'date must be a day as YYYY-MM-DD (UTC)');
  }
  if (date > new Date().toISOString().slice(0, 10)) throw new ApiError(400, 'invalid_request', `date ${date} is in the future`);
  return date;
}

/** GET /v1/statements?date=: the calling client's daily statement (issue 24, item 5), JSON or CSV. */
@Controller('v1/statements')
@UseGuards(ApiKeyGuard, ClientThrottlerGuard)
export class StatementsController {
  constructor(private readonly statements: StatementsRepository) {}

  @Get()
  @RequireScope('statements:read')
  @StatementDocs()
  async daily(@Req() req: AuthedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Query() query: Record<string, unknown>, @Headers('accept') accept: unknown) {
    const { date, format, ...rest } = query;
    const unknown = Object.keys(rest);
    if (unknown.length) throw new ApiError(400, 'invalid_request', `Unknown query parameter(s): ${unknown.join(', ')}`);
    if (format !== undefined && format !== 'json' && format !== 'csv') throw new ApiError(400, 'invalid_request', 'format must be json or csv');
    const day = parseStatementDate(date);
    const client = req.apiClient.client;
    const lines = await this.statements.daily(day, client);
    const csv = format === 'csv' || (format === undefined && typeof accept === 'string' && /\btext\/csv\b/.test(accept));
    if (csv) {
      void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="cardpull-statement-${client}-${day}.csv"`);
      return statementCsv(day, lines);
    }
    return {
      date: day,
      client,
      lines: lines.map((l) => ({
        gift_card_code: l.giftCardCode, currency: l.currency, cards: l.cards, face_value: l.faceValue, cost: l.cost,
        surplus_cards: l.surplusCards, surplus: l.surplus, in_doubt: l.inDoubt,
      })),
    };
  }
}
