import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AUTH_ERRORS, ApiErrors } from './api-errors';
import { API_KEY_AUTH } from './orders.docs';

const LINE = {
  type: 'object',
  required: ['gift_card_code', 'currency', 'cards', 'face_value', 'cost', 'surplus_cards', 'surplus', 'in_doubt'],
  properties: {
    gift_card_code: { type: 'string' },
    currency: { type: 'string', description: 'ISO 4217 (the partner account\'s, PARTNER_CURRENCY)' },
    cards: { type: 'integer', description: 'Cards stored that day as their order\'s card' },
    face_value: { type: 'integer', description: 'Their face value, minor units' },
    cost: { type: 'integer', description: 'What they cost (face value less the discount fixed when each order was accepted), minor units' },
    surplus_cards: { type: 'integer', description: 'Cards beyond their order\'s (surplus, or differing from it) stored that day' },
    surplus: { type: 'integer', description: 'Their cost, minor units' },
    in_doubt: { type: 'integer', description: 'At the end of the day: the cost of your orders waiting on a request ID of unknown outcome, minor units' },
  },
};

export const StatementDocs = () =>
  applyDecorators(
    ApiTags('statements'),
    ApiBearerAuth(API_KEY_AUTH),
    ApiOperation({
      summary: 'Your daily statement',
      description:
        'Scope `statements:read`. Your cards of one day (UTC), per gift card: count, face value and cost of the cards stored that day, the surplus cards, and what was in doubt at the day\'s end, ' +
        'from the ledger. JSON by default; `format=csv` (or `Accept: text/csv`) answers CSV, safe to open in a spreadsheet app (a text cell that would start a formula is prefixed with an apostrophe). Amounts in minor units.',
    }),
    ApiQuery({ name: 'date', required: true, description: 'The day, YYYY-MM-DD (UTC)', example: '2026-11-28', schema: { type: 'string', format: 'date' } }),
    ApiQuery({ name: 'format', required: false, description: '`json` (default) or `csv`', schema: { type: 'string', enum: ['json', 'csv'] } }),
    ApiProduces('application/json', 'text/csv'),
    ApiResponse({
      status: 200,
      description: 'The statement.',
      content: {
        'application/json': {
          schema: { type: 'object', required: ['date', 'client', 'lines'], properties: { date: { type: 'string', format: 'date' }, client: { type: 'string' }, lines: { type: 'array', items: LINE } } },
        },
        'text/csv': { schema: { type: 'string' }, example: 'date,client,gift_card_code,currency,cards,face_value,cost,surplus_cards,surplus,in_doubt\r\n2026-11-28,shop,ACME-BOOKS-FIXED,EUR,2,5000,4825,0,0,0\r\n' },
      },
    }),
    ApiErrors(...AUTH_ERRORS, 'invalid_request'),
  );
