import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { SkipThrottle, Throttle, ThrottlerException } from '@nestjs/throttler';
import { ClientThrottlerGuard } from './client-throttler.guard';
import { FixedWindowThrottlerStorage } from './fixed-window-throttler.storage';

class Routes {
  plain() {}
  @Throttle({ default: { limit: 1, ttl: 60_000 } })
  strict() {}
  @SkipThrottle()
  skipped() {}
}

/** A request of `client` to `Routes[route]`, and the headers its answer got. */
function call(route: keyof Routes, client: string) {
  const headers: Record<string, unknown> = {};
  const req = { apiClient: { client }, ip: '10.0.0.1', headers: {} };
  const res = { header: (name: string, value: unknown) => (headers[name] = value) };
  const context = {
    getHandler: () => Routes.prototype[route],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ExecutionContext;
  return { context, headers };
}

describe('ClientThrottlerGuard: the per-client limit, its settings settled once per route (issue 22)', () => {
  const made = async () => {
    const reflector = new Reflector();
    const looked = { n: 0 };
    const getAllAndOverride = reflector.getAllAndOverride.bind(reflector);
    reflector.getAllAndOverride = ((...a: Parameters<Reflector['getAllAndOverride']>) => (looked.n++, getAllAndOverride(...a))) as Reflector['getAllAndOverride'];
    const guard = new ClientThrottlerGuard({ throttlers: [{ ttl: 60_000, limit: 3 }] }, new FixedWindowThrottlerStorage(), reflector);
    await guard.onModuleInit();
    return { guard, looked };
  };

  it('a plain route: 3 requests of a client pass with the X-RateLimit headers, the 4th is refused with Retry-After; another client is apart; the route metadata is read once', async () => {
    const { guard, looked } = await made();
    const answers: (boolean | string)[] = [];
    let last: Record<string, unknown> = {};
    for (let i = 0; i < 4; i++) {
      const { context, headers } = call('plain', 'shop');
      answers.push(await guard.canActivate(context).catch((e: unknown) => (e instanceof ThrottlerException ? 'refused' : String(e))));
      last = headers;
      if (i === 2) expect(headers).toEqual({ 'X-RateLimit-Limit': 3, 'X-RateLimit-Remaining': 0, 'X-RateLimit-Reset': 60 });
    }
    expect(answers).toEqual([true, true, true, 'refused']);
    expect(last['Retry-After']).toBe(60);
    expect(await guard.canActivate(call('plain', 'other').context)).toBe(true);
    const afterFirst = looked.n;
    await guard.canActivate(call('plain', 'third').context);
    expect(looked.n).toBe(afterFirst);
  });

  it('routes with their own throttler metadata keep it (@Throttle, @SkipThrottle): ThrottlerGuard decides them as before', async () => {
    const { guard } = await made();
    expect(await guard.canActivate(call('strict', 'shop').context)).toBe(true);
    await expect(guard.canActivate(call('strict', 'shop').context)).rejects.toBeInstanceOf(ThrottlerException);
    for (let i = 0; i < 5; i++) expect(await guard.canActivate(call('skipped', 'shop').context)).toBe(true);
  });
});
