import { Controller, Get, Inject, Injectable, Module, Req, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Cluster, Redis } from 'ioredis';
import type { Pool } from 'pg';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PG_POOL } from '@cardpull/db';
import { createRedis } from '@cardpull/queue';
import { PartnerStatus } from './partner-status/partner-status.service';
import { PartnerStatusModule } from './partner-status/partner-status.module';
import { ApiKeyCheck, withTimeout } from '@cardpull/platform';

const CHECK_TIMEOUT_MS = 2_000;

/** Postgres and Redis indicators for /health/ready. */
@Injectable()
export class DependencyIndicators {
  private readonly redis: Redis | Cluster;
  private connecting?: Promise<void>;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(SERVICE_CONFIG) config: Pick<ServiceConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>,
    private readonly health: HealthIndicatorService,
  ) {
    this.redis = createRedis(config, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.redis.on('error', () => undefined);
  }

  async postgres() {
    const check = this.health.check('postgres');
    try {
      await withTimeout(this.pool.query('SELECT 1'), CHECK_TIMEOUT_MS);
      return check.up();
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }

  async redisPing() {
    const check = this.health.check('redis');
    try {
      // Concurrent probes share one connection attempt: a ping sent while connecting would fail at once
      // (no offline queue) and report a healthy Redis as down.
      if (this.redis.status === 'wait' || this.redis.status === 'end') {
        this.connecting ??= this.redis
          .connect()
          .catch(() => undefined)
          .finally(() => (this.connecting = undefined));
      }
      if (this.connecting) await withTimeout(this.connecting, CHECK_TIMEOUT_MS);
      await withTimeout(this.redis.ping(), CHECK_TIMEOUT_MS);
      return check.up();
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}

/**
 * The partner in /health/ready. How a partner problem affects readiness (the reading this service uses):
 *
 * - Readiness means "this process can take and keep orders": Postgres and Redis. Neither the API nor the
 *   worker needs the partner for that. Orders are durable and wait (same request ID, awaiting_*), so an
 *   unreachable or failing partner never fails readiness: the check reports `partner` as `degraded`
 *   (overall status `degraded`, HTTP 200) with the last failure and the last known balance.
 * - An open partner circuit (the partner refuses our credentials: unauthorized / invalid_signature) is
 *   reported the same way, `degraded` with `circuit: "open"`, the partner's code and since when, so it is
 *   visible in the probe as well as in `cardpull_partner_circuit_open` and the worker's ALERT log line. It
 *   does not fail readiness either: the circuit is one row in Postgres shared by every process, so failing
 *   readiness would take every API instance out of the load balancer at once (an intake outage while
 *   orders could still be accepted and kept), and neither a restart nor a reschedule fixes a credential.
 * - The balance comes from the cached probe (PartnerStatus: PartnerSnapshots.balance(), at most one
 *   partner call per PARTNER_CACHE_TTL_MS per process, however often this is called, also while the
 *   partner fails) and the check waits at most PARTNER_READ_WAIT_MS for it.
 */
@Injectable()
export class PartnerIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly partner: PartnerStatus,
  ) {}

  async check() {
    const check = this.health.check('partner');
    const [circuit, reading] = await Promise.all([
      withTimeout(this.partner.circuitState(), CHECK_TIMEOUT_MS).catch(() => null),
      this.partner.balance(),
    ]);
    const snap = reading?.snapshot;
    const balance = snap
      ? {
          balance: snap.data.balance.amount,
          balance_fetched_at: snap.fetchedAt.toISOString(),
          balance_stale: snap.stale,
          low_balance: this.partner.isLow(reading),
        }
      : { balance: null };
    if (circuit?.state === 'open') {
      return check.degraded({
        circuit: 'open',
        message: 'The partner refuses our credentials: partner calls are paused and orders wait (nothing is failed)',
        code: circuit.lastErrorCode,
        since: circuit.openedAt?.toISOString() ?? null,
        ...balance,
      });
    }
    const circuitState = circuit?.state ?? 'unknown';
    if (!reading) return check.degraded({ circuit: circuitState, reachable: null, message: 'The first balance check is still running', ...balance });
    if (reading.failure) {
      return check.degraded({
        circuit: circuitState,
        reachable: false,
        message: 'The partner did not give the balance; orders are accepted and wait',
        last_failure: { outcome: reading.failure.outcome, message: reading.failure.message.slice(0, 200), at: reading.failure.at.toISOString() },
        ...balance,
      });
    }
    return check.up({ circuit: circuitState, reachable: true, ...balance });
  }
}

type Checks = Record<string, { status: string }>;
type Readiness = { info?: Checks; error?: Checks; details?: Checks };

/** The statuses alone: what a probe without a key may see (no balance, no error text, no partner code). */
function statusesOnly(result: unknown): unknown {
  const r = result as Readiness;
  const only = (checks?: Checks) => (checks ? Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { status: c.status }])) : checks);
  return { ...r, info: only(r.info), error: only(r.error), details: only(r.details) };
}

/**
 * Health routes: no API key needed (probes from the orchestrator), no secret in the answers. The details of
 * readiness (the partner's balance, error texts, the circuit's partner code) only for a caller with any
 * valid API key; a probe without one gets the statuses. A key sent here goes through the same throttled
 * check as everywhere else (ApiKeyCheck): an unknown one counts as a failed authentication of the address,
 * and a throttled address gets the statuses only, whatever key it sends. Readiness itself is never refused.
 */
@Controller('health')
@ApiTags('operations')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly deps: DependencyIndicators,
    private readonly partner: PartnerIndicator,
    @Inject(ApiKeyCheck) private readonly keys: ApiKeyCheck,
  ) {}

  /** The process is up (for restarts). Needs no dependency. */
  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process is up', description: 'No API key. Checks no dependency: restart the process only when this fails.' })
  live() {
    return { status: 'ok' };
  }

  /**
   * Ready to do its work: Postgres and Redis answer (else 503). The partner is a detail that never fails
   * readiness (see PartnerIndicator). The 503 keeps terminus's body, which says what is down.
   */
  @Get('ready')
  @HealthCheck()
  @ApiOperation({
    summary: 'Readiness: Postgres and Redis answer',
    description:
      'No API key: the statuses only; with any valid API key also the details (balance, error texts); an unknown key counts as a failed authentication (AUTH_FAILURES_PER_MINUTE). 503 when Postgres or Redis does not answer. The partner is reported under `partner` and never fails readiness: ' +
      '`degraded` (HTTP 200) while it cannot be reached or while its circuit is open (credentials refused; `circuit: "open"`), because orders are still accepted and kept. ' +
      'The balance comes from the cached probe (at most one partner call per PARTNER_CACHE_TTL_MS).',
  })
  async ready(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const client = await this.keys.optionalClient(req.headers.authorization, req.ip);
    const shown = client ? (r: unknown) => r : statusesOnly;
    try {
      return shown(await this.health.check([() => this.deps.postgres(), () => this.deps.redisPing(), () => this.partner.check()]));
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      void reply.status(503);
      return shown(error.getResponse());
    }
  }
}

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), PartnerStatusModule],
  controllers: [HealthController],
  providers: [DependencyIndicators, PartnerIndicator],
  exports: [DependencyIndicators],
})
export class HealthModule {}
