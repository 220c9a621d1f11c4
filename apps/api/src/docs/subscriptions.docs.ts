import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SUBSCRIBABLE_EVENTS } from '@cardpull/orders';
import { AUTH_ERRORS, ApiErrors } from './api-errors';
import { API_KEY_AUTH } from './orders.docs';
import { schemaRef } from './schemas';

const EVENT_PARAM = ApiParam({ name: 'eventType', description: 'The event: `catalog.changed`', schema: { type: 'string', enum: [...SUBSCRIBABLE_EVENTS] }, example: 'catalog.changed' });
const SUBSCRIPTION = { event_type: 'catalog.changed', created_at: '2026-11-30T09:00:00.000Z', callback_url: 'https://shop.example.com/hooks' };

export const SubscriptionsDocs = () => applyDecorators(ApiTags('subscriptions'), ApiBearerAuth(API_KEY_AUTH), ApiErrors(...AUTH_ERRORS));

export const ListSubscriptionsDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Your subscriptions', description: 'Scope `orders:read`. The events beyond your orders\' that are sent to your callback URL.' }),
    ApiResponse({
      status: 200,
      description: 'Your subscriptions',
      content: { 'application/json': { schema: schemaRef('SubscriptionList'), examples: { example: { summary: 'Subscribed to catalog.changed', value: { subscriptions: [SUBSCRIPTION] } } } } },
    }),
  );

export const PutSubscriptionDocs = () =>
  applyDecorators(
    ApiOperation({
      summary: 'Subscribe to an event',
      description:
        "Scope `subscriptions:write`. `catalog.changed`: each time cardpull finds the partner's catalog changed (a gift card added or withdrawn, face values, PIN, " +
        'a discount moved past CATALOG_DISCOUNT_CHANGE_THRESHOLD, a discount scheduled), one signed callback with the changes goes to your CALLBACK_URLS address, ' +
        'signed and retried like the order callbacks. Your client needs a callback URL and secret configured by the operators. Idempotent.',
    }),
    EVENT_PARAM,
    ApiResponse({ status: 201, description: 'Subscribed', content: { 'application/json': { schema: schemaRef('SubscriptionResponse'), examples: { created: { summary: 'New', value: { subscription: SUBSCRIPTION, created: true } } } } } }),
    ApiResponse({ status: 200, description: 'Subscribed already: nothing changed', content: { 'application/json': { schema: schemaRef('SubscriptionResponse'), examples: { again: { summary: 'Again', value: { subscription: SUBSCRIPTION, created: false } } } } } }),
    ApiErrors('invalid_request', 'callback_not_configured'),
  );

export const DeleteSubscriptionDocs = () =>
  applyDecorators(
    ApiOperation({ summary: 'Unsubscribe from an event', description: 'Scope `subscriptions:write`. No more such events are written for you (those written already are still delivered). Idempotent.' }),
    EVENT_PARAM,
    ApiResponse({ status: 204, description: 'Not subscribed (any more)' }),
    ApiErrors('invalid_request'),
  );
