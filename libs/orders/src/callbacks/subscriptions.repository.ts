import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL, type Queryable } from '@cardpull/db';

/**
 * The events a client may subscribe to through the API (issue 25). Order events need no subscription (an
 * order's callback URL is enough), and `balance.low` is chosen by the operators (BALANCE_LOW_CALLBACK_CLIENTS).
 */
export const SUBSCRIBABLE_EVENTS = ['catalog.changed'] as const;
export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];
export const isSubscribableEvent = (type: string): type is SubscribableEvent => (SUBSCRIBABLE_EVENTS as readonly string[]).includes(type);

export interface SubscriptionRow {
  client: string;
  eventType: SubscribableEvent;
  createdAt: Date;
}

/** Something a statement can run on: the pool, or a transaction's connection. */

/** A client's subscriptions (event_subscriptions), and who is subscribed when an event is written. */
@Injectable()
export class SubscriptionsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async list(client: string): Promise<SubscriptionRow[]> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      `SELECT client, event_type AS "eventType", created_at AS "createdAt" FROM event_subscriptions WHERE client = $1 ORDER BY event_type`,
      [client],
    );
    return rows;
  }

  /** Subscribes (once: a second call keeps the first's time); `created` says whether it is new. */
  async subscribe(client: string, eventType: SubscribableEvent): Promise<SubscriptionRow & { created: boolean }> {
    const { rows } = await this.pool.query<SubscriptionRow & { created: boolean }>(
      `WITH ins AS (INSERT INTO event_subscriptions (client, event_type) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING client, event_type, created_at)
       SELECT client, event_type AS "eventType", created_at AS "createdAt", true AS created FROM ins
       UNION ALL
       SELECT client, event_type, created_at, false FROM event_subscriptions WHERE client = $1 AND event_type = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [client, eventType],
    );
    return rows[0]!;
  }

  /** Whether there was a subscription to end. */
  async unsubscribe(client: string, eventType: SubscribableEvent): Promise<boolean> {
    const { rowCount } = await this.pool.query(`DELETE FROM event_subscriptions WHERE client = $1 AND event_type = $2`, [client, eventType]);
    return (rowCount ?? 0) > 0;
  }

  /** The clients subscribed to `eventType`, read on `db` (the transaction that writes the event). */
  async subscribers(eventType: SubscribableEvent, db: Queryable = this.pool): Promise<string[]> {
    const { rows } = await db.query<{ client: string }>(`SELECT client FROM event_subscriptions WHERE event_type = $1 ORDER BY client`, [eventType]);
    return rows.map((r) => r.client);
  }
}
