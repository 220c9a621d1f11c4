import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AUTH_ERRORS, ApiErrors } from './api-errors';
import { API_KEY_AUTH } from './orders.docs';
import { schemaRef } from './schemas';

const CODE_PARAM = ApiParam({ name: 'code', description: 'Gift card code', schema: { type: 'string' }, example: 'ACME-BOOKS-FIXED' });
const json = (name: Parameters<typeof schemaRef>[0], example: unknown) => ({
  'application/json': { schema: schemaRef(name), examples: { example: { summary: 'Example', value: example } } },
});

export const CatalogDocs = () => applyDecorators(ApiTags('catalog'), ApiBearerAuth(API_KEY_AUTH), ApiErrors(...AUTH_ERRORS));

export const ListGiftCardsDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: "The partner's gift cards",
      description:
        'Scope `orders:read`. Our cached catalog (refreshed every CATALOG_REFRESH_INTERVAL_MS): the gift cards and amounts an order may ask for. ' +
        'While no catalog could be read yet, 503 `catalog_unavailable` (never an empty list).',
    }),
    ApiResponse({ status: 200, description: 'The catalog', content: json('GiftCardList', { gift_cards: [], refreshed_at: '2026-11-22T10:00:00.000Z' }) }),
    ApiErrors('catalog_unavailable'),
  );

export const GetGiftCardDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'One gift card',
      description:
        "Scope `orders:read`. From the cached catalog (a miss starts a read of the partner in the background). 404 when the catalog as last read lacks it (with when it was withdrawn, if it was); 503 `catalog_unavailable` when the catalog could not be read.",
    }),
    CODE_PARAM,
    ApiResponse({
      status: 200,
      description: 'The gift card',
      content: json('GiftCardResponse', {
        gift_card: { code: 'ACME-BOOKS-FIXED', name: 'Acme Books gift card', facial_values: { type: 'fixed', amounts: [1000, 2500, 5000, 10000] } },
        refreshed_at: '2026-11-22T10:00:00.000Z',
      }),
    }),
    ApiErrors('gift_card_not_found', 'catalog_unavailable'),
  );

export const GetInventoryDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Stock of a gift card', description: 'Scope `orders:read`. The partner inventory through our cache (PARTNER_CACHE_TTL_MS).' }),
    CODE_PARAM,
    ApiResponse({
      status: 200,
      description: 'The inventory; `stale` when the partner could not be asked and this is an older copy',
      content: json('InventoryResponse', {
        inventories: {
          gift_card: { code: 'ACME-BOOKS-FIXED', name: 'Acme Books gift card' },
          end_to_end_api: { enabled: true, available_amount: 'unlimited' },
          stocks: [{ facial_value: 2500, owned_quantity: 500, shared_quantity: 0 }],
        },
        fetched_at: '2026-11-22T10:15:00.000Z',
        stale: false,
      }),
    }),
    ApiErrors('gift_card_not_found', 'catalog_unavailable', 'partner_unavailable'),
  );

export const GetBalanceDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Our balance at the partner',
      description: 'Scope `orders:read`. Through our cache (PARTNER_CACHE_TTL_MS), in currency units, with the low-balance flag (LOW_BALANCE_THRESHOLD).',
    }),
    ApiResponse({
      status: 200,
      description: 'The balance',
      content: json('BalanceResponse', { balance: { amount: 15230.5 }, fetched_at: '2026-11-22T10:15:00.000Z', stale: false, low: false, low_balance_threshold: 100 }),
    }),
    ApiErrors('partner_unavailable'),
  );
