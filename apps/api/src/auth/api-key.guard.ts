import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { SERVICE_CONFIG, type ApiClient, type Scope, type ServiceConfig } from '@cardpull/config';
import { ApiError } from '@cardpull/platform';

export const SCOPE_KEY = 'cardpull:scope';
/** The scope a route needs (ARCHITECTURE.md "Internal REST contract": orders:write, orders:read, cards:read). */
export const RequireScope = (scope: Scope) => SetMetadata(SCOPE_KEY, scope);

export type AuthedRequest = FastifyRequest & { apiClient: ApiClient };

const digest = (key: string) => createHash('sha256').update(key).digest();

/**
 * `Authorization: Bearer <key>` against API_KEYS. Keys are compared as SHA-256 digests in constant time,
 * so neither the comparison nor a map lookup leaks how much of a key was right.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly clients: { digest: Buffer; client: ApiClient }[];

  constructor(
    @Inject(SERVICE_CONFIG) config: ServiceConfig,
    private readonly reflector: Reflector,
  ) {
    this.clients = config.API_KEYS.map((client) => ({ digest: digest(client.key), client }));
  }

  canActivate(context: ExecutionContext): boolean {
    const scope = this.reflector.getAllAndOverride<Scope | undefined>(SCOPE_KEY, [context.getHandler(), context.getClass()]);
    if (!scope) return true;
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw new ApiError(401, 'unauthorized', 'Missing or malformed Authorization header: expected "Bearer <API key>"');
    const presented = digest(match[1]!);
    let found: ApiClient | undefined;
    for (const candidate of this.clients) {
      if (timingSafeEqual(candidate.digest, presented)) found = candidate.client;
    }
    if (!found) throw new ApiError(401, 'unauthorized', 'Unknown API key');
    if (!found.scopes.has(scope)) throw new ApiError(403, 'forbidden', `This API key lacks the scope ${scope}`);
    request.apiClient = found;
    return true;
  }
}
