import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, type Registry } from 'prom-client';
import { METRICS_REGISTRY, METRIC_PREFIX } from '@cardpull/platform';

/**
 * Seconds from intake to card. The SLO alert (ops/prometheus/cardpull.rules.yml) reads the 60 s bucket: a
 * sync order gets its card in one call (the spec's 10 s deadline, a retry or two), an async one after a
 * few polls; keep a bucket at the objective you choose.
 */
export const TIME_TO_CARD_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

/**
 * What an order's life looks like from outside, counted in the worker where it happens: the time from
 * intake to card of each completed order (its first card: a surplus or mismatched card is not a
 * completion), and each callback delivery attempt by result (delivered, retry, given_up).
 */
@Injectable()
export class OrderMetrics {
  readonly timeToCard: Histogram<'mode'>;
  readonly callbackDeliveries: Counter<'result'>;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.timeToCard = new Histogram({
      name: `${METRIC_PREFIX}order_time_to_card_seconds`,
      help: 'Seconds from intake (the order row) to its card stored, per completed order, by mode (sync, async)',
      labelNames: ['mode'],
      buckets: TIME_TO_CARD_BUCKETS,
      registers: [registry],
    });
    this.callbackDeliveries = new Counter({
      name: `${METRIC_PREFIX}callback_deliveries_total`,
      help: 'Callback delivery attempts by result: delivered, retry (failed, will be tried again), given_up (failed for good)',
      labelNames: ['result'],
      registers: [registry],
    });
    for (const mode of ['sync', 'async']) this.timeToCard.zero({ mode });
    for (const result of ['delivered', 'retry', 'given_up']) this.callbackDeliveries.inc({ result }, 0);
  }
}
