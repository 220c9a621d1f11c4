import { join } from 'node:path';
import { chaosSettings, runChaos, type ChaosReport } from '../../bench/chaos/runner';
import { summaryLines } from '../../bench/chaos/report';
import { stamp } from '../../bench/chaos/infra';

/**
 * The chaos run (docs/CHAOS.md), small enough for `npm test`: 200 orders through the partner faults, one
 * SIGKILL of a worker (restarted), one FLUSHALL of the run's own Redis and one restart of the run's own
 * Postgres cluster, then the same verdict as `npm run chaos`. It uses dist/ as built by `npm test` (it does
 * not rebuild: other suites run the same files meanwhile).
 */
describe('chaos run (small): partner faults, a killed worker, a FLUSHALL and a Postgres restart lose no card and pull none twice', () => {
  let report: ChaosReport;
  const lines: string[] = [];

  beforeAll(async () => {
    const settings = chaosSettings({
      orders: 200,
      rate: 25,
      killEveryS: 4,
      maxKills: 1,
      quietTimeoutS: 120,
      skipBuild: true,
      // Only used when no cluster of its own can be made (no initdb): then a database on the test server.
      sharedDatabaseUrl: process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
      reportDir: join('reports', `chaos-mini-${stamp()}`),
    });
    report = await runChaos(settings, { log: (line) => lines.push(line), progress: () => undefined });
    // The table, whatever happens next (jest shows console output with the test's result).
    console.log(summaryLines(report).join('\n'));
  }, 5 * 60_000);

  it('ran: every disruption happened', () => {
    expect(report.error).toBeNull();
    expect(report.figures.orders.created).toBe(200);
    expect(report.figures.kills).toHaveLength(1);
    expect(report.figures.flush).not.toBeNull();
    expect(report.figures.postgresRestart).not.toBeNull();
    expect(report.figures.partner.requestIdsSentMoreThanOnce).toBeGreaterThan(0);
  });

  it('every order is terminal within the limit after the faults stopped', () => {
    expect(report.figures.timeToQuietS).not.toBeNull();
    const open = Object.entries(report.figures.orders.byStatus).filter(([s]) => !['completed', 'failed', 'needs_attention'].includes(s));
    expect(open).toEqual([]);
  });

  it('no violation: ledger = database, one card per order, same request ID until a definitive failure, no overlap, no secret in logs or storage, no crash', () => {
    expect(report.violations).toEqual([]);
    expect(report.figures.cards.stored).toBe(report.figures.cards.issuedForOurRequestIds);
  });
});
