import { Registry, collectDefaultMetrics } from 'prom-client';

/** The prom-client registry of this Nest app (one per process in production: the API, or the worker). */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

/** Every name this service exports starts with this prefix (also the default process and Node metrics). */
export const METRIC_PREFIX = 'cardpull_';

/**
 * A registry of its own rather than prom-client's global one: tests run the API and the worker in one
 * process, and two apps must not register the same metric names twice in one registry.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  return registry;
}
