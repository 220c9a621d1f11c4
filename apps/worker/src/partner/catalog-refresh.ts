import { Injectable } from '@nestjs/common';
import { CatalogSource } from '@cardpull/orders';
import { PeriodicTask } from '../tasks/periodic-task';

/** At start and every CATALOG_REFRESH_INTERVAL_MS, reads the partner's catalog into Postgres, where the API validates orders against it. */
@Injectable()
export class CatalogRefresh extends PeriodicTask<boolean> {
  protected readonly taskName = 'catalog refresh';
  protected readonly every = 'CATALOG_REFRESH_INTERVAL_MS';
  protected override readonly runAtStart = true;

  constructor(private readonly source: CatalogSource) {
    super();
  }

  protected async tick(): Promise<boolean> {
    return (await this.source.refresh()) !== null;
  }
}
