import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { createRedis } from '@cardpull/queue';
import { ApiKeyCheck } from './api-key.guard';
import { FleetCounters } from './fleet-counters';

/** Closes the counters' Redis connection with the application. */
@Injectable()
class CountersConnection implements OnApplicationShutdown {
  constructor(@Inject(FleetCounters) private readonly counters: FleetCounters) {}
  onApplicationShutdown(): void {
    this.counters.close();
  }
}

/**
 * The abuse limits counted across the fleet (FleetCounters, on its own Redis connection) and the one check
 * of an API key (ApiKeyCheck), for every app that takes keys or logins: the API and the worker (/metrics).
 */
@Global()
@Module({
  providers: [
    {
      provide: FleetCounters,
      inject: [SERVICE_CONFIG],
      useFactory: (c: ServiceConfig) => {
        const log = new Logger('AbuseLimits');
        // Commands wait while it connects; each count has its own 1 s deadline, then falls back to memory.
        // Auto-pipelining: the looks of the requests under way go to Redis in one write per tick.
        const redis = createRedis(c, {
          connectionName: 'cardpull-abuse',
          enableAutoPipelining: true,
          maxRetriesPerRequest: 1,
          connectTimeout: 2_000,
          retryStrategy: (times) => Math.min(times * 200, 2_000),
        });
        redis.on('error', () => undefined);
        return new FleetCounters(redis, { prefix: c.REDIS_PREFIX, log: { warn: (o: object, m: string) => log.warn(o, m) } });
      },
    },
    ApiKeyCheck,
    CountersConnection,
  ],
  exports: [FleetCounters, ApiKeyCheck],
})
export class FleetCountersModule {}
