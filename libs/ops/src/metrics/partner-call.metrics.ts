import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { PartnerCallListeners, PartnerClient, type PartnerCallEvent, type PartnerEndpoint } from '@cardpull/partner-client';
import { METRICS_REGISTRY, METRIC_PREFIX } from '@cardpull/platform';

/** Seconds; the partner client's timeout is PARTNER_TIMEOUT_MS (10 s by default). */
const DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];

/** Answers that end a request ID for good but lead to a new one later (awaiting_funds / awaiting_stock). */
const NEW_ATTEMPT_CODES = new Set(['out_of_stock', 'not_enough_funds']);
const PULL_ENDPOINTS: readonly PartnerEndpoint[] = ['createCard', 'createPullRequest'];

/** Label values come from the partner (error codes): keep them to short identifiers, bounded in number. */
const label = (value: string | undefined): string => (value && /^[A-Za-z0-9_]{1,64}$/.test(value) ? value : value ? 'other' : 'none');

/**
 * Partner call metrics from PartnerCallListeners (every call the client makes in this process): latency by
 * endpoint and outcome, outcomes with their reason (the unknown reason, or the partner's error code), and
 * the retries these answers cause (ARCHITECTURE.md "Partner calls and their classification"):
 * - `same_id`: an unknown outcome of a pull creation (timeout, network, 5xx, 429, "come back later", ...) is
 *   retried with the same request ID; a 404 when polling an ID we created means "create it again, same ID".
 * - `new_attempt`: out_of_stock / not_enough_funds end the request ID; the order gets a new one when the
 *   stock or the funds allow (or fails at its deadline); a pull request in status `error` ends its request
 *   ID too, and the order gets a new one (up to ASYNC_MAX_ATTEMPTS).
 * Counted when the answer arrives, in the process that made the call (the worker). Also the partner's time
 * (ARCHITECTURE.md "Partner time"): this process's estimate of the partner's clock offset, and the calls
 * re-sent once signed with the partner's time after a 401 whose Date showed ours was off.
 */
@Injectable()
export class PartnerCallMetrics implements OnModuleInit {
  readonly duration: Histogram<'endpoint' | 'outcome'>;
  readonly calls: Counter<'endpoint' | 'outcome' | 'reason'>;
  readonly retries: Counter<'endpoint' | 'kind'>;
  readonly resigned: Counter<'endpoint' | 'outcome'>;

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    private readonly listeners: PartnerCallListeners,
    /** This process's partner client, whose clock the offset gauge reads (absent: the gauge says 0). */
    @Optional() client?: PartnerClient,
  ) {
    this.duration = new Histogram({
      name: `${METRIC_PREFIX}partner_call_duration_seconds`,
      help: 'Duration of partner API calls, by endpoint and outcome (success, definitive, credentials, request_id_used, not_found, unknown)',
      labelNames: ['endpoint', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    this.calls = new Counter({
      name: `${METRIC_PREFIX}partner_calls_total`,
      help: 'Partner API calls by endpoint, outcome and reason (the unknown reason, or the partner error code; none for a success)',
      labelNames: ['endpoint', 'outcome', 'reason'],
      registers: [registry],
    });
    this.retries = new Counter({
      name: `${METRIC_PREFIX}pull_retries_total`,
      help: 'Partner answers that cause a retry of a pull: kind=same_id (unknown outcome, or a created ID the partner does not know: sent again with the same request ID), kind=new_attempt (out_of_stock / not_enough_funds, or a pull request in status error: a new request ID)',
      labelNames: ['endpoint', 'kind'],
      registers: [registry],
    });
    this.resigned = new Counter({
      name: `${METRIC_PREFIX}partner_resigned_calls_total`,
      help: 'Partner calls refused 401 whose Date header showed our signing time was off, sent again once signed with the partner\'s time, by endpoint and the outcome of the second send (credentials: refused again)',
      labelNames: ['endpoint', 'outcome'],
      registers: [registry],
    });
    new Gauge({
      name: `${METRIC_PREFIX}partner_clock_offset_seconds`,
      help: 'The partner\'s clock minus ours, as this process estimates it from the Date headers of the partner\'s answers (median of the last 15; 0 before any); requests are signed with our clock plus it',
      registers: [registry],
      collect() {
        this.set(client ? client.clock.offsetMs() / 1000 : 0);
      },
    });
    for (const endpoint of [...PULL_ENDPOINTS, 'getPullRequest']) {
      for (const kind of ['same_id', 'new_attempt']) this.retries.inc({ endpoint, kind }, 0);
    }
  }

  onModuleInit(): void {
    this.listeners.add((event) => this.record(event));
  }

  record(event: PartnerCallEvent): void {
    const { endpoint, outcome } = event;
    this.duration.observe({ endpoint, outcome }, event.durationMs / 1000);
    this.calls.inc({ endpoint, outcome, reason: label(outcome === 'unknown' ? event.reason : event.code) });
    if (event.resigned) this.resigned.inc({ endpoint, outcome });
    if (PULL_ENDPOINTS.includes(endpoint) && outcome === 'unknown') this.retries.inc({ endpoint, kind: 'same_id' });
    if (endpoint === 'getPullRequest' && outcome === 'not_found') this.retries.inc({ endpoint, kind: 'same_id' });
    if (PULL_ENDPOINTS.includes(endpoint) && outcome === 'definitive' && NEW_ATTEMPT_CODES.has(event.code ?? '')) {
      this.retries.inc({ endpoint, kind: 'new_attempt' });
    }
    if ((endpoint === 'getPullRequest' || endpoint === 'createPullRequest') && outcome === 'success' && event.pullStatus === 'error') {
      this.retries.inc({ endpoint, kind: 'new_attempt' });
    }
  }
}
