import { Controller, Delete, Get, HttpCode, Inject, Param, Put, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { SUBSCRIBABLE_EVENTS, SubscriptionsRepository, isSubscribableEvent, type SubscribableEvent, type SubscriptionRow } from '@cardpull/orders';
import { ApiError, ApiKeyGuard, ClientThrottlerGuard, RequireScope, type AuthedRequest } from '@cardpull/platform';
import { DeleteSubscriptionDocs, ListSubscriptionsDocs, PutSubscriptionDocs, SubscriptionsDocs } from '../docs/subscriptions.docs';

/**
 * A client's subscriptions to events beyond its own orders' (issue 25: `catalog.changed`). They are delivered
 * as the order callbacks are (the outbox, signed with the client's CALLBACK_SECRETS entry, retried) to the
 * client's CALLBACK_URLS address: so a client without one configured cannot subscribe.
 */
@Controller('v1/subscriptions')
@UseGuards(ApiKeyGuard, ClientThrottlerGuard)
@SubscriptionsDocs()
export class SubscriptionsController {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'CALLBACK_SECRETS' | 'CALLBACK_URLS'>,
    private readonly subscriptions: SubscriptionsRepository,
  ) {}

  @Get()
  @RequireScope('orders:read')
  @ListSubscriptionsDocs()
  async list(@Req() req: AuthedRequest) {
    const rows = await this.subscriptions.list(req.apiClient.client);
    return { subscriptions: rows.map((r) => this.view(r)) };
  }

  /** Idempotent: subscribing again changes nothing (200, `created: false`). */
  @Put(':eventType')
  @RequireScope('subscriptions:write')
  @PutSubscriptionDocs()
  async subscribe(@Req() req: AuthedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('eventType') eventType: string) {
    const event = this.event(eventType);
    const client = req.apiClient.client;
    if (!this.config.CALLBACK_URLS.has(client) || !this.config.CALLBACK_SECRETS.has(client)) {
      const missing = this.config.CALLBACK_URLS.has(client) ? 'secret (CALLBACK_SECRETS) to sign them' : 'callback URL (CALLBACK_URLS) to send them to';
      throw new ApiError(422, 'callback_not_configured', `Client ${client} has no ${missing}: it cannot subscribe to ${event}; ask the operators to configure one`);
    }
    const { created, ...row } = await this.subscriptions.subscribe(client, event);
    if (created) void reply.status(201);
    return { subscription: this.view(row), created };
  }

  /** Idempotent: 204 whether or not the client was subscribed. */
  @Delete(':eventType')
  @RequireScope('subscriptions:write')
  @HttpCode(204)
  @DeleteSubscriptionDocs()
  async unsubscribe(@Req() req: AuthedRequest, @Param('eventType') eventType: string): Promise<void> {
    await this.subscriptions.unsubscribe(req.apiClient.client, this.event(eventType));
  }

  private event(eventType: string): SubscribableEvent {
    if (!isSubscribableEvent(eventType)) {
      throw new ApiError(400, 'invalid_request', `Unknown event ${JSON.stringify(eventType)}: a client may subscribe to ${SUBSCRIBABLE_EVENTS.join(', ')}`);
    }
    return eventType;
  }

  private view(r: SubscriptionRow) {
    return { event_type: r.eventType, created_at: r.createdAt.toISOString(), callback_url: this.config.CALLBACK_URLS.get(r.client) ?? null };
  }
}
