import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { loadServiceConfig } from '@cardpull/config';
import { ApiKeyCheck, ApiKeyGuard, SCOPE_KEY } from './api-key.guard';
import { FleetCounters } from './fleet-counters';

const config = loadServiceConfig({ CARDPULL_PROFILE: 'local', API_KEYS: 'shop:shop-key-0001', LOG_LEVEL: 'silent' });

/** A request to a handler annotated with `scope` (none: a route someone forgot to annotate), from `ip`. */
function context(scope: string | undefined, authorization: string | undefined, ip = '10.0.0.1'): ExecutionContext {
  const handler = () => undefined;
  if (scope) Reflect.defineMetadata(SCOPE_KEY, scope, handler);
  const request = { headers: authorization ? { authorization } : {}, ip };
  return { getHandler: () => handler, getClass: () => class {}, switchToHttp: () => ({ getRequest: () => request }) } as unknown as ExecutionContext;
}

// The counts in memory (no Redis): the rule of the guard. Counting across the fleet is proven over HTTP
// with two API apps on one Redis (test/security/authentication.e2e-spec.ts).
const newGuard = () => new ApiKeyGuard(new Reflector(), new ApiKeyCheck(config, new FleetCounters(null, { prefix: 'unit', log: { warn: () => undefined } })));

describe('ApiKeyGuard: deny by default, and failed authentications throttled per address', () => {
  it('a route with no scope annotation is refused, even with a valid key (nothing is public by omission)', async () => {
    const guard = newGuard();
    await expect(guard.canActivate(context(undefined, 'Bearer shop-key-0001'))).rejects.toThrow(expect.objectContaining({ status: 403, code: 'forbidden' }));
    await expect(guard.canActivate(context(undefined, undefined))).rejects.toThrow(expect.objectContaining({ status: 403 }));
    expect(await guard.canActivate(context('orders:read', 'Bearer shop-key-0001'))).toBe(true);
  });

  it('after 30 unknown keys from one address within a minute, that address gets 429 (valid key or not); other addresses are not affected', async () => {
    const guard = newGuard();
    for (let i = 0; i < 30; i++) await expect(guard.canActivate(context('orders:read', `Bearer guess-${i}-xxxxxx`, '10.9.9.9'))).rejects.toThrow(expect.objectContaining({ status: 401 }));
    await expect(guard.canActivate(context('orders:read', 'Bearer guess-31-xxxxxx', '10.9.9.9'))).rejects.toThrow(expect.objectContaining({ status: 429, code: 'too_many_attempts' }));
    // Guessing must not tell a right key from a wrong one once throttled.
    await expect(guard.canActivate(context('orders:read', 'Bearer shop-key-0001', '10.9.9.9'))).rejects.toThrow(expect.objectContaining({ status: 429 }));
    expect(await guard.canActivate(context('orders:read', 'Bearer shop-key-0001', '10.1.1.1'))).toBe(true);
  });
});
