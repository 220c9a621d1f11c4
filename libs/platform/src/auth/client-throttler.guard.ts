import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { AuthedRequest } from './api-key.guard';

/**
 * Per-client rate limit (RATE_LIMIT_PER_CLIENT per RATE_LIMIT_WINDOW_MS): runs after ApiKeyGuard, so the
 * tracker is the authenticated client, not an address (many clients share a gateway's address). Counted
 * across the fleet in fixed windows (FleetThrottlerStorage, in Redis). Beyond the limit: 429
 * too_many_requests in the envelope, with Retry-After.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    const client = (req as unknown as AuthedRequest).apiClient?.client;
    return client ? `client:${client}` : `ip:${String((req as { ip?: string }).ip)}`;
  }

  /** One budget per client across all routes (the default key would give each route its own). */
  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }
}
