import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerGenerateKeyFunction, type ThrottlerGetTrackerFunction, type ThrottlerOptions } from '@nestjs/throttler';
import type { AuthedRequest } from './api-key.guard';

/** @nestjs/throttler's metadata keys (its throttler.constants, not exported): a route's own limits and skips. */
const ROUTE_METADATA = ['THROTTLER:SKIP', 'THROTTLER:LIMIT', 'THROTTLER:TTL', 'THROTTLER:BLOCK_DURATION', 'THROTTLER:TRACKER', 'THROTTLER:KEY_GENERATOR'];

/** One throttler's settings for a route, as ThrottlerGuard.canActivate resolves them on every request. */
interface Settled {
  throttler: ThrottlerOptions;
  limit: number;
  ttl: number;
  blockDuration: number;
  getTracker: ThrottlerGetTrackerFunction;
  generateKey: ThrottlerGenerateKeyFunction;
}

/**
 * Per-client rate limit (RATE_LIMIT_PER_CLIENT per RATE_LIMIT_WINDOW_MS): runs after ApiKeyGuard, so the
 * tracker is the authenticated client, not an address (many clients share a gateway's address). Counted
 * across the fleet in fixed windows (FleetThrottlerStorage, in Redis). Beyond the limit: 429
 * too_many_requests in the envelope, with Retry-After.
 *
 * What a route is limited by is settled once per route (issue 22): ThrottlerGuard looks up six metadata
 * keys per throttler and awaits each setting on every request. A route with any throttler metadata of its
 * own (@Throttle, @SkipThrottle), or settings computed per request (functions), goes through
 * ThrottlerGuard's own path as before; the rest (every route today) through handleRequest directly, with
 * the same counting, headers and refusal.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  private readonly settled = new WeakMap<object, WeakMap<object, Settled[] | null>>();

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const handler = context.getHandler();
    const classRef = context.getClass();
    let byClass = this.settled.get(handler);
    if (!byClass) this.settled.set(handler, (byClass = new WeakMap()));
    let settled = byClass.get(classRef);
    if (settled === undefined) byClass.set(classRef, (settled = this.settle(handler, classRef)));
    if (!settled) return super.canActivate(context);
    if (await this.shouldSkip(context)) return true;
    for (const s of settled) await this.handleRequest({ context, ...s });
    return true;
  }

  /** The route's throttlers when nothing about them depends on the route's metadata or the request; else null. */
  private settle(handler: object, classRef: object): Settled[] | null {
    const targets = [handler as () => void, classRef as () => void];
    const settled: Settled[] = [];
    for (const throttler of this.throttlers) {
      if (ROUTE_METADATA.some((key) => this.reflector.getAllAndOverride(key + throttler.name, targets) !== undefined)) return null;
      if (throttler.skipIf || this.commonOptions.skipIf) return null;
      const { limit, ttl } = throttler;
      const blockDuration = throttler.blockDuration ?? ttl;
      if (typeof limit !== 'number' || typeof ttl !== 'number' || typeof blockDuration !== 'number') return null;
      settled.push({
        throttler,
        limit,
        ttl,
        blockDuration,
        getTracker: throttler.getTracker ?? this.commonOptions.getTracker!,
        generateKey: throttler.generateKey ?? this.commonOptions.generateKey!,
      });
    }
    return settled;
  }

  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    const client = (req as unknown as AuthedRequest).apiClient?.client;
    return client ? `client:${client}` : `ip:${String((req as { ip?: string }).ip)}`;
  }

  /** One budget per client across all routes (the default key would give each route its own). */
  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }
}
