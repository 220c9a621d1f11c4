import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import { CATALOG_CHANGE_KINDS, CatalogChangesRepository, type CatalogChangeKind } from '@cardpull/orders';
import { METRIC_PREFIX, METRICS_REGISTRY, withTimeout } from '@cardpull/platform';
import { OPERATIONS_CACHE_MS } from './operations.metrics';

const SOURCE_TIMEOUT_MS = 2_000;

/**
 * `cardpull_catalog_changes_total{kind}` (issue 25): the changes of the partner's catalog recorded so far, by
 * kind, counted in Postgres at scrape time (read at most once per OPERATIONS_CACHE_MS). A change is recorded
 * by whichever process stored the catalog read that showed it (a worker's refresh, an API's read on a miss),
 * so a count kept in one process would miss the others'; counted from the table, every process exports the
 * same total, which survives restarts: aggregate with max(), and alert on increase(). Left out of the scrape
 * when Postgres does not answer.
 */
@Injectable()
export class CatalogChangeMetrics implements OnModuleInit {
  private readonly log = new Logger(CatalogChangeMetrics.name);
  private cached?: { at: number; value: Promise<Record<CatalogChangeKind, number> | null> };

  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    private readonly changes: CatalogChangesRepository,
  ) {}

  onModuleInit(): void {
    const counts = () => this.counts();
    new Counter({
      name: `${METRIC_PREFIX}catalog_changes_total`,
      help: "Changes of the partner's catalog recorded (issue 25), by kind: added, removed, face_values_changed, code_pin_changed, discount_changed, discount_scheduled. The whole deployment's, from Postgres (the same on every process)",
      labelNames: ['kind'],
      registers: [this.registry],
      async collect() {
        const byKind = await counts();
        this.reset();
        if (byKind) for (const kind of CATALOG_CHANGE_KINDS) this.inc({ kind }, byKind[kind]);
      },
    });
  }

  private counts(): Promise<Record<CatalogChangeKind, number> | null> {
    if (!this.cached || Date.now() - this.cached.at >= OPERATIONS_CACHE_MS) {
      const value = withTimeout(this.changes.counts(), SOURCE_TIMEOUT_MS).catch((error: Error) => {
        this.log.warn({ err: error.message }, 'catalog change counts unavailable for /metrics');
        return null;
      });
      this.cached = { at: Date.now(), value };
    }
    return this.cached.value;
  }
}
