import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { CALL_GATE } from '@cardpull/partner-client';
import { createRedis } from '@cardpull/queue';
import { parsePartnerLimits } from './limits';
import { RedisCallGate } from './redis-call-gate';

/** The gate's options from the settings: PARTNER_LIMITS, the longest call deadline as the lease of a place in flight. */
export function gateOptions(c: ServiceConfig, log: Logger) {
  const longest = Math.max(c.PARTNER_TIMEOUT_MS, c.PARTNER_TIMEOUT_SYNC_MS, c.PARTNER_TIMEOUT_CREATE_MS, c.PARTNER_TIMEOUT_POLL_MS, c.PARTNER_TIMEOUT_READ_MS);
  return {
    prefix: c.REDIS_PREFIX,
    limits: parsePartnerLimits(c.PARTNER_LIMITS),
    leaseMs: longest + 2_000,
    maxYieldMs: c.PARTNER_POLL_MAX_YIELD_MS,
    floorPerSecond: c.PARTNER_BACKOFF_FLOOR_PER_SECOND,
    log: { warn: (o: object, m: string) => log.warn(o, m), log: (o: object, m: string) => log.log(o, m) },
  };
}

/** Closes the gate (and its own Redis connection) with the application. */
@Injectable()
class GateConnection implements OnApplicationShutdown {
  constructor(@Inject(RedisCallGate) private readonly gate: RedisCallGate) {}
  onApplicationShutdown(): void {
    this.gate.close();
  }
}

/**
 * The fleet-wide limits on partner calls (RedisCallGate), given to the partner client (CALL_GATE) and to
 * whoever takes a permit before recording a call as sent (the step runner, the reconciler).
 */
@Global()
@Module({
  providers: [
    {
      provide: RedisCallGate,
      inject: [SERVICE_CONFIG],
      useFactory: (c: ServiceConfig) => {
        const log = new Logger('PartnerLimits');
        // Its own connection. Commands wait for it while it connects (at start-up the API reads the catalog
        // at once); each gate call has its own 1 s deadline, and while Redis is down they fail after one
        // reconnection attempt: calls then go on without the limits.
        const redis = createRedis(c, {
          connectionName: 'cardpull-traffic',
          maxRetriesPerRequest: 1,
          connectTimeout: 2_000,
          retryStrategy: (times) => Math.min(times * 200, 2_000),
        });
        redis.on('error', () => undefined);
        return new RedisCallGate(redis, gateOptions(c, log));
      },
    },
    { provide: CALL_GATE, useExisting: RedisCallGate },
    GateConnection,
  ],
  exports: [RedisCallGate, CALL_GATE],
})
export class TrafficModule {}
