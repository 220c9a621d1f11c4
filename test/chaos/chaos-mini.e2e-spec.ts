import { join } from 'node:path';
import { chaosSettings, runChaos, type ChaosReport } from '../../bench/chaos/runner';
import { summaryLines } from '../../bench/chaos/report';
import { stamp } from '../../bench/chaos/infra';

/**
 * The chaos run (docs/CHAOS.md), small enough for `npm test`: 200 orders through the partner faults and the
 * hostile readings of the spec (business errors checked before request IDs, lagging reads, 202s, "unlimited"
 * inventories without stock, lags past a 422 "already used", answers about other request IDs), one
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

  it('every order is terminal within the limit after the faults stopped, or in doubt: waiting on a request ID of unknown outcome that is still asked', () => {
    expect(report.figures.timeToQuietS).not.toBeNull();
    const open = Object.entries(report.figures.orders.byStatus)
      .filter(([s]) => !['completed', 'failed', 'needs_attention'].includes(s))
      .reduce((n, [, c]) => n + c.total, 0);
    expect(open).toBeLessThanOrEqual(report.figures.orders.inDoubt?.count ?? 0);
  });

  it('money: 0 lost cards, 0 orders that caused two cards, 0 new request IDs while an earlier one could still yield a card, 0 IDs declared dead without an operator', () => {
    expect(report.figures.money).toEqual({ lostCards: 0, ordersWithTwoCards: 0, newIdsWhileLive: 0, declaredDeadWithoutOperator: 0 });
    expect(report.figures.cards.stored).toBe(report.figures.cards.issuedTotal);
  });

  it('the partner read the spec the hostile way meanwhile: business errors before request IDs, lagging reads (after a 422 too), 202s, rate limits, "unlimited" inventories, other request IDs', () => {
    const hits = report.figures.partner.faultHits;
    expect(Object.keys(hits)).toEqual(
      expect.arrayContaining([
        'any/business_first',
        'pull_request_status/read_lag',
        'cards/accepted_202',
        'any/rate_limited',
        'any/inventory_unlimited',
        'pull_request_status/read_lag_after_422',
        'pull_request_status/other_request_id',
        'pull_requests/other_request_id',
      ]),
    );
  });

  it('no violation: ledger = database, one card per order, same request ID until proven dead, no overlap, no secret in logs or storage, no crash', () => {
    expect(report.violations).toEqual([]);
  });
});
