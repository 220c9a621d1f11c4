import { Controller, Get, Inject, Injectable, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import Redis from 'ioredis';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';
import { redisOptions } from '@cardpull/queue';

/** Postgres and Redis indicators for /health/ready. */
@Injectable()
export class DependencyIndicators {
  private readonly redis: Redis;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(SERVICE_CONFIG) config: ServiceConfig,
    private readonly health: HealthIndicatorService,
  ) {
    this.redis = new Redis({ ...redisOptions(config.REDIS_URL), lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.redis.on('error', () => undefined);
  }

  async postgres() {
    const check = this.health.check('postgres');
    try {
      await withTimeout(this.pool.query('SELECT 1'), 2_000);
      return check.up();
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }

  async redisPing() {
    const check = this.health.check('redis');
    try {
      if (this.redis.status === 'wait' || this.redis.status === 'end') await this.redis.connect().catch(() => undefined);
      await withTimeout(this.redis.ping(), 2_000);
      return check.up();
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref())]);
}

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly deps: DependencyIndicators,
  ) {}

  /** The process is up (for restarts). Needs no dependency. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** Ready to do its work: Postgres and Redis answer. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.deps.postgres(), () => this.deps.redisPing()]);
  }
}

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [DependencyIndicators],
  exports: [DependencyIndicators],
})
export class HealthModule {}
