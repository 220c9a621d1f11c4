import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Counter, Gauge, type Registry } from 'prom-client';
import { CALL_KINDS } from '@cardpull/partner-client';
import { METRIC_PREFIX, METRICS_REGISTRY } from '@cardpull/platform';
import { RedisCallGate, type ScopeView } from '@cardpull/traffic';

/** Scrapes within this window share one read of the limits in Redis. */
const CACHE_MS = 1_000;

/**
 * The fleet's partner limits for Prometheus, per scope (create, poll, read, any), read from Redis at
 * scrape time (the same in every process: aggregate with max()): the configured and the current rate, the
 * calls admitted in the last second and in flight, whether a Retry-After pause holds the scope (and until
 * when), the 429s of the last hour; and this process's own count of calls it held back, per reason.
 * If Redis does not answer, the scope gauges are left out of the scrape (never 0).
 */
@Injectable()
export class PartnerTrafficMetrics implements OnModuleInit {
  private cached?: { at: number; value: Promise<ScopeView[] | null> };
  private readonly counted = new Map<string, number>();

  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    private readonly gate: RedisCallGate,
  ) {}

  private views(): Promise<ScopeView[] | null> {
    if (!this.cached || Date.now() - this.cached.at > CACHE_MS) this.cached = { at: Date.now(), value: this.gate.snapshot() };
    return this.cached.value;
  }

  onModuleInit(): void {
    const registers = [this.registry];
    const views = () => this.views();
    const scopeGauge = (name: string, help: string, value: (v: ScopeView) => number | null) =>
      new Gauge({
        name: `${METRIC_PREFIX}${name}`,
        help,
        labelNames: ['scope'],
        registers,
        async collect() {
          const all = await views();
          this.reset();
          for (const v of all ?? []) {
            const x = value(v);
            if (x !== null) this.set({ scope: v.scope }, x);
          }
        },
      });
    scopeGauge('partner_limit_per_second', 'Configured fleet-wide calls per second to the partner (PARTNER_LIMITS); absent when unlimited', (v) => v.limitPerSecond || null);
    scopeGauge('partner_limit_in_flight', 'Configured fleet-wide calls in flight to the partner (PARTNER_LIMITS); absent when unlimited', (v) => v.limitInFlight || null);
    scopeGauge('partner_rate_per_second', 'Rate in force: the configured one, or lower while adapting to 429s without Retry-After; absent when unlimited', (v) => v.ratePerSecond || null);
    scopeGauge('partner_rate_adaptive', '1 while the rate is lowered after 429s without Retry-After', (v) => (v.adaptive ? 1 : 0));
    scopeGauge('partner_calls_last_second', 'Calls admitted to the partner in the last whole second, fleet-wide', (v) => v.lastSecond);
    scopeGauge('partner_calls_in_flight', 'Calls to the partner in flight, fleet-wide', (v) => v.inFlight);
    scopeGauge('partner_paused', '1 while a Retry-After of the partner holds these calls back in every worker', (v) => (v.pausedUntil ? 1 : 0));
    scopeGauge('partner_paused_until_seconds', 'End of the Retry-After pause (unix seconds); absent when not paused', (v) => (v.pausedUntil ? v.pausedUntil.getTime() / 1000 : null));
    scopeGauge('partner_rate_limited_last_hour', '429 answers of the partner in the last hour, fleet-wide', (v) => v.rateLimitedLastHour);
    const gate = this.gate;
    const counted = this.counted;
    new Counter({
      name: `${METRIC_PREFIX}partner_held_back_total`,
      help: 'Times this process was refused a permit to call the partner, by kind of call and reason (paused, rate, in_flight, yield)',
      labelNames: ['kind', 'reason'],
      registers,
      collect() {
        for (const kind of CALL_KINDS) {
          for (const [reason, n] of Object.entries(gate.heldBack[kind])) {
            const key = `${kind}/${reason}`;
            const delta = n - (counted.get(key) ?? 0);
            if (delta > 0) this.inc({ kind, reason }, delta);
            counted.set(key, n);
          }
        }
      },
    });
  }
}
