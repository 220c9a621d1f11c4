import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { SERVICE_CONFIG, type ApiClient, type Scope, type ServiceConfig } from '@cardpull/config';
import { ApiError } from '../api-error';

export const SCOPE_KEY = 'cardpull:scope';
/** The scope a route needs (ARCHITECTURE.md "Internal REST contract": orders:write, orders:read, cards:read; and metrics:read). */
export const RequireScope = (scope: Scope) => SetMetadata(SCOPE_KEY, scope);

export type AuthedRequest = FastifyRequest & { apiClient: ApiClient };

const digest = (key: string) => createHash('sha256').update(key).digest();

/**
 * Finds the client of an API key (constant time over all configured keys), or undefined. Shared by the
 * guard and the /docs hook.
 */
export class ApiKeys {
  private readonly clients: { digest: Buffer; client: ApiClient }[];

  constructor(clients: readonly ApiClient[]) {
    this.clients = clients.map((client) => ({ digest: digest(client.key), client }));
  }

  find(key: string): ApiClient | undefined {
    const presented = digest(key);
    let found: ApiClient | undefined;
    for (const candidate of this.clients) {
      if (timingSafeEqual(candidate.digest, presented)) found = candidate.client;
    }
    return found;
  }
}

/** The key of an `Authorization: Bearer <key>` header, or null. */
export function bearerKey(header: unknown): string | null {
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

const FAILED_AUTH_WINDOW_MS = 60_000;

/**
 * `Authorization: Bearer <key>` against API_KEYS. Keys are compared as SHA-256 digests in constant time,
 * so neither the comparison nor a map lookup leaks how much of a key was right.
 *  - Deny by default: a route guarded here without a scope annotation (RequireScope) is refused, so a new
 *    route cannot become public by omission.
 *  - Guessing is throttled: after AUTH_FAILURES_PER_MINUTE unknown keys from one address within a minute, that
 *    address gets 429 for the rest of the minute, for any key (a valid one included, or the answers would
 *    still tell a right guess from a wrong one). Per process; a fleet multiplies the allowance.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly keys: ApiKeys;
  private readonly maxFailures: number;
  private readonly failures = new Map<string, { windowStart: number; count: number }>();

  constructor(
    @Inject(SERVICE_CONFIG) config: ServiceConfig,
    private readonly reflector: Reflector,
  ) {
    this.keys = new ApiKeys(config.API_KEYS);
    this.maxFailures = config.AUTH_FAILURES_PER_MINUTE;
  }

  canActivate(context: ExecutionContext): boolean {
    const scope = this.reflector.getAllAndOverride<Scope | undefined>(SCOPE_KEY, [context.getHandler(), context.getClass()]);
    if (!scope) throw new ApiError(403, 'forbidden', 'This route declares no scope, so no key may call it');
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const address = request.ip ?? 'unknown';
    const now = Date.now();
    const failed = this.failures.get(address);
    if (failed && now - failed.windowStart < FAILED_AUTH_WINDOW_MS && failed.count >= this.maxFailures) {
      throw new ApiError(429, 'too_many_attempts', 'Too many failed authentications from this address; try again in a minute');
    }
    const key = bearerKey(request.headers.authorization);
    if (!key) throw new ApiError(401, 'unauthorized', 'Missing or malformed Authorization header: expected "Bearer <API key>"');
    const found = this.keys.find(key);
    if (!found) {
      this.noteFailure(address, now);
      throw new ApiError(401, 'unauthorized', 'Unknown API key');
    }
    if (!found.scopes.has(scope)) throw new ApiError(403, 'forbidden', `This API key lacks the scope ${scope}`);
    request.apiClient = found;
    return true;
  }

  private noteFailure(address: string, now: number): void {
    const current = this.failures.get(address);
    if (current && now - current.windowStart < FAILED_AUTH_WINDOW_MS) {
      current.count++;
      return;
    }
    // Bounded memory: a new window drops the entries whose window is over.
    if (this.failures.size >= 10_000) for (const [a, f] of this.failures) if (now - f.windowStart >= FAILED_AUTH_WINDOW_MS) this.failures.delete(a);
    if (this.failures.size < 10_000) this.failures.set(address, { windowStart: now, count: 1 });
  }
}
