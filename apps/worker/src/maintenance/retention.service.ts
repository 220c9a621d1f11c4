import { Injectable } from '@nestjs/common';
import { RetentionRepository } from '@cardpull/orders';
import { PeriodicTask } from '../tasks/periodic-task';

export interface RetentionReport {
  archived: number;
  secretsDestroyed: number;
}

/** One run stops after this long (the next run goes on): a backlog of years drains over many runs. */
const RUN_BUDGET_MS = 60_000;
/** A breath between two batches, so the rest of the work on Postgres gets its turn. */
const PAUSE_MS = 50;

/**
 * Keeps the data small (issue 13): every RETENTION_INTERVAL_MS, terminal orders untouched for
 * RETENTION_DAYS move to orders_archive, and the card secrets of archived orders are destroyed
 * RETENTION_SECRETS_DAYS after the order ended unless an operator marked it disputed. Batches of
 * RETENTION_BATCH orders, each one short statement that skips locked rows (RetentionRepository): intake
 * and the workers never wait for it. Off unless the settings say so.
 */
@Injectable()
export class Retention extends PeriodicTask<RetentionReport> {
  protected readonly taskName = 'retention';
  protected readonly every = 'RETENTION_INTERVAL_MS';

  constructor(private readonly repo: RetentionRepository) {
    super();
  }

  /** One run now (tests, operators' scripts), unless another worker is running it. */
  async runNow(): Promise<RetentionReport> {
    return (await this.runOnce()) ?? { archived: 0, secretsDestroyed: 0 };
  }

  protected async tick(): Promise<RetentionReport> {
    const { RETENTION_DAYS: days, RETENTION_SECRETS_DAYS: secretsDays, RETENTION_BATCH: batch } = this.config;
    const report: RetentionReport = { archived: 0, secretsDestroyed: 0 };
    const until = Date.now() + RUN_BUDGET_MS;
    const drain = async (step: () => Promise<number>, key: keyof RetentionReport) => {
      while (Date.now() < until) {
        const n = await step();
        report[key] += n;
        if (n < batch) return;
        await new Promise((r) => setTimeout(r, PAUSE_MS));
      }
    };
    if (days > 0) await drain(() => this.repo.archiveBatch(days, batch, this.config.RECONCILE_DEAD_RECHECK_MS), 'archived');
    if (secretsDays > 0) await drain(() => this.repo.destroySecretsBatch(secretsDays, batch), 'secretsDestroyed');
    if (report.archived || report.secretsDestroyed) {
      this.log.log(report, `retention: ${report.archived} orders archived, card secrets of ${report.secretsDestroyed} archived orders destroyed`);
    }
    return report;
  }
}
