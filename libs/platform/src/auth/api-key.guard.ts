import { hash, randomUUID, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { SERVICE_CONFIG, type ApiClient, type Scope, type ServiceConfig } from '@cardpull/config';
import { ApiError } from '../api-error';
import { FleetCounters } from './fleet-counters';

export const SCOPE_KEY = 'cardpull:scope';
/** The scope a route needs (ARCHITECTURE.md "Internal REST contract": orders:write, orders:read, cards:read; and metrics:read). */
export const RequireScope = (scope: Scope) => SetMetadata(SCOPE_KEY, scope);

export type AuthedRequest = FastifyRequest & { apiClient: ApiClient };

const digest = (key: string) => hash('sha256', key, 'buffer');

/**
 * Finds the client of an API key (constant time over all configured keys), or undefined. Used by
 * ApiKeyCheck, the one check every route taking a key goes through.
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
 * The one check of an API key, wherever a key is taken (the guard of /v1 and /metrics, the /docs hook,
 * /health/ready): keys are compared as SHA-256 digests in constant time (ApiKeys), and guessing is
 * throttled: after AUTH_FAILURES_PER_MINUTE unknown keys from one address within a minute (sliding), that
 * address gets 429 for any key (a valid one included, or the answers would still tell a right guess from a
 * wrong one) until fewer failures than that are left in the last minute. Counted across the fleet, in Redis
 * (FleetCounters): N API processes allow what one allows. An unknown key costs one Redis round trip (it is
 * recorded); a valid key is checked against the address's count as Redis last answered it for this process,
 * which every failure recorded anywhere in the fleet drops at once (FleetCounters.look), so most requests
 * ask nothing of Redis.
 */
@Injectable()
export class ApiKeyCheck {
  private readonly keys: ApiKeys;
  private readonly maxFailures: number;

  constructor(
    @Inject(SERVICE_CONFIG) config: Pick<ServiceConfig, 'API_KEYS' | 'AUTH_FAILURES_PER_MINUTE'>,
    @Inject(FleetCounters) private readonly counters: FleetCounters,
  ) {
    this.keys = new ApiKeys(config.API_KEYS);
    this.maxFailures = config.AUTH_FAILURES_PER_MINUTE;
  }

  /** The client of an `Authorization: Bearer <key>` header from `address`; ApiError 401 or 429 otherwise. */
  async client(authorization: unknown, address: string): Promise<ApiClient> {
    const key = bearerKey(authorization);
    const found = key ? this.keys.find(key) : undefined;
    // One atomic step: refused if the address is over its failures; an unknown key is recorded as one.
    const allowed = await this.counters.attempt([`auth:${address}`], [this.maxFailures], FAILED_AUTH_WINDOW_MS, key && !found ? randomUUID() : null);
    if (!allowed) throw new ApiError(429, 'too_many_attempts', 'Too many failed authentications from this address; try again in a minute');
    if (!key) throw new ApiError(401, 'unauthorized', 'Missing or malformed Authorization header: expected "Bearer <API key>"');
    if (!found) throw new ApiError(401, 'unauthorized', 'Unknown API key');
    return found;
  }

  /**
   * For routes that answer without a key too (/health/ready): the client of a Bearer key, or null when
   * there is none, it is unknown (counted as a failure) or the address is throttled. Never throws.
   */
  async optionalClient(authorization: unknown, address: string): Promise<ApiClient | null> {
    if (!bearerKey(authorization)) return null;
    return this.client(authorization, address).catch(() => null);
  }
}

/**
 * `Authorization: Bearer <key>` against API_KEYS, through ApiKeyCheck (constant time, throttled across the
 * fleet). Deny by default: a route guarded here without a scope annotation (RequireScope) is refused, so a
 * new route cannot become public by omission.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(ApiKeyCheck) private readonly check: ApiKeyCheck,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const scope = this.reflector.getAllAndOverride<Scope | undefined>(SCOPE_KEY, [context.getHandler(), context.getClass()]);
    if (!scope) throw new ApiError(403, 'forbidden', 'This route declares no scope, so no key may call it');
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const found = await this.check.client(request.headers.authorization, request.ip ?? 'unknown');
    if (!found.scopes.has(scope)) throw new ApiError(403, 'forbidden', `This API key lacks the scope ${scope}`);
    request.apiClient = found;
    return true;
  }
}
