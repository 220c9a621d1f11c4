import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { CatalogSource } from '@cardpull/orders';
import { PeriodicTask } from '../tasks/periodic-task';

/** At start and every CATALOG_REFRESH_INTERVAL_MS, reads the partner's catalog into Postgres, where the API validates orders against it. */
@Injectable()
export class CatalogRefresh extends PeriodicTask<boolean> {
  protected readonly taskName = 'catalog refresh';
  protected override readonly runAtStart = true;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    private readonly source: CatalogSource,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.CATALOG_REFRESH_INTERVAL_MS;
  }

  protected async tick(): Promise<boolean> {
    return (await this.source.refresh()) !== null;
  }
}
