import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkLedger, snapshot } from '@cardpull/testing';
import { databaseText, dbFigures, redisText, statusCounts, storedCards, unsettledOrders } from './collect';
import { applyFaults, faultHits, faultPlan } from './faults';
import { Cleanup, ROOT, buildApps, sleep, stamp, type Log } from './infra';
import { FIXED_STOCK_CODE, SCARCE, balanceNeeded, newLoadState, planOrders, sendOrders } from './load';
import { addViolations, newReport, progressLine, secs, summaryLines, writeReport, type ChaosReport } from './report';
import { describeSettings, type ChaosSettings } from './settings';
import { ChaosStack } from './stack';
import { inDoubt, intakeConsistency, invariantViolations, moneyCounts, notTerminal, overlappingPosts, secretsInFiles, secretsInText } from './verify';

export type { ChaosReport } from './report';
export { chaosSettings, settingsFromEnv, type ChaosSettings } from './settings';

export interface RunOptions {
  /** Where lines go (default: console.log). */
  log?: Log;
  /** Where the progress line goes every ~2 s (default: log). */
  progress?: Log;
}

/**
 * One chaos run (docs/CHAOS.md): starts its own Postgres, Redis, the simulator, the API and the workers;
 * sends the orders while partner faults, worker kills, a FLUSHALL and a Postgres restart happen; waits
 * for every order to be terminal; verifies from the ledger and the database. Never throws: problems are in
 * the report (`ok`, `violations`, `error`), which is also written to <reportDir>/report.json.
 */
export async function runChaos(settings: ChaosSettings, opts: RunOptions = {}): Promise<ChaosReport> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const progress = opts.progress ?? log;
  const started = new Date();
  const reportDir = resolve(ROOT, settings.reportDir ?? join('reports', `chaos-${stamp(started)}`));
  mkdirSync(reportDir, { recursive: true });
  const report = newReport(settings, reportDir);
  const cleanup = new Cleanup();
  // Ctrl-C: clean up, write what is known, exit 130. `on`, not `once`: tsx relays a signal again when the
  // child is slow to acknowledge it, and a second one with no listener would end the process mid-clean-up.
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping every process of the run and cleaning up...`);
    report.error = `interrupted by ${signal}`;
    void cleanup.run().then(
      (errors) => {
        report.warnings.push(...errors.map((e) => `clean-up: ${e}`));
        writeReport(report);
        log(`cleaned up; partial report in ${join(reportDir, 'report.json')}`);
      },
    ).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let ticker: NodeJS.Timeout | undefined;
  const stack = new ChaosStack(settings, reportDir, log, cleanup);
  try {
    if (Number(process.versions.node.split('.')[0]) < 24) throw new Error(`Node ${process.versions.node} runs this; run it through npm (Node 24 from the node package)`);
    log(`chaos run, report in ${reportDir}`);
    for (const line of describeSettings(settings)) log(`  ${line}`);
    report.build = buildApps(settings.skipBuild, log);
    log(`build: ${report.build}`);
    await stack.start();
    report.postgres = { kind: stack.pg.kind, url: stack.pg.url, fallbackReason: stack.pg.fallbackReason, restartMethod: stack.pg.restartMethod };
    if (stack.pg.kind === 'shared') report.warnings.push(`Postgres: fallback to a database on the shared server (${stack.pg.fallbackReason}); the restart was ${stack.pg.restartMethod}`);

    const plan = planOrders(settings.orders, settings.asyncShare, stamp(started).replace(/\D/g, ''));
    await stack.sim.setBalance(balanceNeeded(plan));
    await stack.sim.setStock(FIXED_STOCK_CODE, settings.orders + 100);
    const timeoutMs = Number(settings.timings.PARTNER_TIMEOUT_MS);
    const settleMs = settings.timings.PULL_REQUEST_SETTLE_MS === undefined ? undefined : Number(settings.timings.PULL_REQUEST_SETTLE_MS);
    const faults = faultPlan(settings.faultShare, timeoutMs, { hostileReadings: settings.hostileReadings, settleMs });
    await applyFaults(stack.sim, faults);
    // With the faults, one facial value runs short (load.ts SCARCE): out_of_stock on first sends and re-sends.
    const scarce = faults.length > 0;
    if (scarce) await stack.sim.setStock(SCARCE.code, SCARCE.refill, SCARCE.facialValue);
    let nextRefillAt = Date.now() + SCARCE.everyMs;
    const faultStart = Date.now();
    const since = () => secs(Date.now() - faultStart);
    log(`faults on (${faults.length} families at share ${settings.faultShare}); sending ${settings.orders} orders at ${settings.rate}/s`);

    const load = newLoadState();
    let faultsOn = true;
    const tick = async () => {
      const statuses = await statusCounts(stack.pg.url);
      progress(
        progressLine({
          elapsedS: (Date.now() - faultStart) / 1000,
          sent: load.sent,
          created: load.created,
          planned: settings.orders,
          statuses,
          kills: stack.kills.length,
          flushed: settings.flush ? report.figures.flush !== null : null,
          restarted: settings.postgresRestart ? report.figures.postgresRestart !== null : null,
          faultsOn,
        }),
      );
      for (const p of stack.superviseCrashes()) {
        log(`!! ${p.label} (pid ${p.pid}) exited by itself (${p.exit?.signal ?? `code ${p.exit?.code}`}; see ${p.logFile}): a violation; started again as a supervisor would`);
      }
    };
    ticker = setInterval(() => void tick(), 2_000);
    const sending = sendOrders(plan, load, { apiUrl: stack.apiUrl, apiKey: stack.apiKey, rate: settings.rate }).then(() => {
      report.figures.sendPhaseS = since();
      log(`all ${settings.orders} orders sent in ${report.figures.sendPhaseS} s (${load.created} created so far)`);
    });

    // The fault phase: kills, one flush, one restart (and on a cluster one master killed), until every order is sent and each of them happened.
    const killMaster = settings.redis === 'cluster' && settings.killMaster;
    const killEveryMs = settings.killEveryS * 1000;
    const nextKillDelay = () => killEveryMs * (0.8 + Math.random() * 0.4);
    let nextKillAt = faultStart + nextKillDelay();
    const maxKills = settings.maxKills ?? Infinity;
    const killsWanted = killEveryMs > 0 && maxKills > 0;
    // At least two kills (a second one while the first worker's orders are still recovering), fewer only
    // when CHAOS_MAX_KILLS says so: the phase goes on past the last order sent until they have happened.
    const killsRequired = killsWanted ? Math.min(2, maxKills) : 0;
    for (;;) {
      const third = load.sent >= settings.orders / 3;
      if (scarce && Date.now() >= nextRefillAt) {
        await stack.sim.setStock(SCARCE.code, SCARCE.refill, SCARCE.facialValue).catch(() => undefined);
        nextRefillAt = Date.now() + SCARCE.everyMs;
      }
      if (killsWanted && Date.now() >= nextKillAt && stack.kills.length < maxKills) {
        const k = stack.killRandomWorker(Date.now() - faultStart);
        if (k) log(`SIGKILL ${k.worker} (pid ${k.pid}) at ${secs(k.at)} s; restart in 1-2 s`);
        nextKillAt = Date.now() + nextKillDelay();
      }
      if (settings.flush && !report.figures.flush && third) {
        const keys = await stack.redis.flushAll();
        report.figures.flush = { atS: since(), keys };
        log(`FLUSHALL of the run's Redis at ${report.figures.flush.atS} s (${keys} keys)`);
      }
      if (killMaster && !report.figures.masterKill && load.sent >= settings.orders / 2) {
        const atS = since();
        log(`SIGKILL of the Redis Cluster master holding the queues at ${atS} s`);
        const { port, failoverMs } = await stack.redis.killQueueMaster!(`{cardpull}:orders:wait`);
        report.figures.masterKill = { atS, port, failoverS: secs(failoverMs) };
        log(`its replica serves the slot after ${secs(failoverMs)} s`);
      }
      if (settings.postgresRestart && !report.figures.postgresRestart && load.sent >= (2 * settings.orders) / 3 && !stack.restarting) {
        const atS = since();
        log(`Postgres restart at ${atS} s: ${stack.pg.restartMethod}`);
        const { downMs } = await stack.pg.restart();
        report.figures.postgresRestart = { atS, downS: secs(downMs), method: stack.pg.restartMethod };
        log(`Postgres back after ${secs(downMs)} s`);
        nextKillAt = Math.max(nextKillAt, Date.now() + 3_000);
      }
      const allHappened =
        load.done &&
        (!settings.flush || report.figures.flush) &&
        (!settings.postgresRestart || report.figures.postgresRestart) &&
        (!killMaster || report.figures.masterKill) &&
        stack.kills.length >= killsRequired;
      if (allHappened && !stack.restarting) break;
      await sleep(200);
    }
    await sending;
    await stack.restartsDone();
    report.figures.partner.faultHits = faultHits(await stack.sim.faults());
    await stack.sim.clearFaults();
    if (scarce) await stack.sim.setStock(SCARCE.code, settings.orders + 100, SCARCE.facialValue);
    faultsOn = false;
    const faultsStopped = Date.now();
    report.figures.faultPhaseS = since();
    log(`faults off at ${report.figures.faultPhaseS} s; waiting for every order to be terminal (at most ${settings.quietTimeoutS} s)`);

    // Quiet: every order terminal, or waiting on a request ID of unknown outcome that its step still asks
    // about (in doubt: only the partner's word or an operator's ends it), and nothing left at the partner that
    // the asking would still bring (no pull running, every card issued stored), within the limit after the
    // faults stopped.
    const settled = async () => {
      if ((await unsettledOrders(stack.pg.url)) !== 0) return false;
      const ledger = await stack.sim.ledger().catch(() => null);
      return !!ledger && ledger.pulls.every((p) => p.outcome !== null) && (await storedCards(stack.pg.url)) === ledger.cards.length;
    };
    while (Date.now() - faultsStopped < settings.quietTimeoutS * 1000) {
      if (await settled()) {
        report.figures.timeToQuietS = secs(Date.now() - faultsStopped);
        break;
      }
      await sleep(500);
    }
    clearInterval(ticker);
    await tick();
    log(report.figures.timeToQuietS !== null ? `quiet ${report.figures.timeToQuietS} s after the faults stopped` : `NOT quiet after ${settings.quietTimeoutS} s`);

    // Verify, with the service stopped so that nothing moves between the ledger and the snapshot.
    await stack.stopService();
    if (settings.partnerLimits) report.figures.partner.limits = await stack.sim.limits();
    const ledger = await stack.sim.ledger();
    const db = await snapshot(stack.pg.url);
    verify(report, stack, ledger, db, load, timeoutMs);
    const money = await checkLedger(stack.pg.url);
    report.figures.ledger = { ...money.totals, problems: money.problems.length };
    addViolations(report, 'ledger', money.problems);
    const figures = await dbFigures(stack.pg.url);
    Object.assign(report.figures.orders, { ...figures, sent: load.sent, created: load.created, intakeRetries: load.retries });
    if (stack.pg.logFile && existsSync(stack.pg.logFile)) copyFileSync(stack.pg.logFile, join(reportDir, 'postgres.log'));
    const logFiles = readdirSync(reportDir).filter((f) => f.endsWith('.log')).map((f) => join(reportDir, f));
    report.figures.partner.pausesBegun = pausesBegun(logFiles.filter((f) => /\/(api|worker)[^/]*\.log$/.test(f)));
    const scanned = secretsInFiles(logFiles, ledger);
    report.figures.logs = { files: logFiles.length, bytesScanned: scanned.bytes };
    addViolations(report, 'secrets in logs', scanned.problems);
    addViolations(report, 'secrets in the database', secretsInText('the database (every table as text)', await databaseText(stack.pg.url), ledger));
    const dumps = await Promise.all((await stack.redis.clients()).map((c) => redisText(c)));
    const redisDump = { text: dumps.map((d) => d.text).join('\n'), keys: dumps.reduce((n, d) => n + d.keys, 0) };
    addViolations(report, 'secrets in Redis', secretsInText(`Redis (${redisDump.keys} keys)`, redisDump.text, ledger));
  } catch (error) {
    if (!interrupted) {
      report.error = (error as Error).stack ?? String(error);
      log(`chaos run could not complete: ${report.error}`);
    }
  } finally {
    if (ticker) clearInterval(ticker);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    for (const e of await cleanup.run()) report.warnings.push(`clean-up: ${e}`);
    report.finishedAt = new Date().toISOString();
    report.durationS = secs(Date.now() - started.getTime());
    report.ok = !report.error && report.violations.length === 0;
    writeReport(report);
    for (const line of summaryLines(report)) log(line);
  }
  return report;
}

type Ledger = Awaited<ReturnType<ChaosStack['sim']['ledger']>>;

function verify(report: ChaosReport, stack: ChaosStack, ledger: Ledger, db: Awaited<ReturnType<typeof snapshot>>, load: ReturnType<typeof newLoadState>, timeoutMs: number): void {
  const ours = new Set(db.attempts.map((a) => a.request_id));
  const posts = ledger.requests.filter((r) => r.method === 'POST');
  const perId = new Map<string, number>();
  for (const p of posts) if (p.request_id) perId.set(p.request_id, (perId.get(p.request_id) ?? 0) + 1);
  report.figures.partner = {
    ...report.figures.partner,
    requests: ledger.requests.length,
    posts: posts.length,
    requestIdsSentMoreThanOnce: [...perId.values()].filter((n) => n > 1).length,
    creationsBusiestSecond: busiestSecond(posts.filter((p) => p.path === '/partners/v1/cards' || p.path === '/partners/v1/pull_requests').map((p) => Date.parse(p.at))),
  };
  report.figures.cards = { issuedForOurRequestIds: ledger.cards.filter((c) => ours.has(c.request_id)).length, issuedTotal: ledger.cards.length, stored: db.cards.length, byRole: {} };
  report.figures.crashes = stack.crashRestarts.map((c) => ({ process: c.label, pid: c.pid, restartedAs: c.newPid }));
  report.figures.kills = stack.kills.map((k) => ({ atS: secs(k.at), worker: k.worker, pid: k.pid, newPid: k.newPid, restartS: k.restartMs === null ? null : secs(k.restartMs) }));

  if (ledger.requests.length >= 180_000) {
    report.warnings.push(`the simulator's ledger holds ${ledger.requests.length} requests: it keeps at most 200,000 and drops the oldest, so early requests may be missing from the checks`);
  }
  const money = moneyCounts(db, ledger);
  report.figures.money = {
    lostCards: money.lostCards.length,
    ordersWithTwoCards: money.ordersWithTwoCards.length,
    newIdsWhileLive: money.newIdsWhileLive.length,
    declaredDeadWithoutOperator: money.declaredDeadWithoutOperator.length,
  };
  report.figures.cards.byRole = countBy(db.cards.map((c) => c.role));
  addViolations(report, 'lost cards', money.lostCards);
  addViolations(report, 'orders that caused two cards', money.ordersWithTwoCards);
  addViolations(report, 'new request ID while an earlier one could still yield a card', money.newIdsWhileLive);
  addViolations(report, 'IDs declared dead without an operator', money.declaredDeadWithoutOperator);
  addViolations(report, 'invariants', invariantViolations(db, ledger));
  addViolations(report, 'one request ID in flight at a time', overlappingPosts(ledger, timeoutMs));
  const doubt = inDoubt(db);
  report.figures.orders.inDoubt = { count: doubt.length, byLastAnswer: countBy(doubt.map((d) => d.lastAnswer)) };
  addViolations(report, 'terminal in time', report.figures.timeToQuietS === null ? notTerminal(db, report.settings.quietTimeoutS) : []);
  addViolations(report, 'intake', [
    ...load.rejected.map((f) => `order ${f.key} rejected by the API: ${f.status} ${f.error}`),
    ...load.gaveUp.map((f) => `order ${f.key} never created (last: ${f.status ?? 'no answer'} ${f.error})`),
    ...intakeConsistency([...load.orderIds.values()], db),
  ]);
  addViolations(
    report,
    'processes',
    stack.unexpectedExits().map((p) => `${p.label} (pid ${p.pid}) exited by itself (${p.exit?.signal ?? `code ${p.exit?.code}`}); see ${p.logFile}`),
  );
  // card_mismatch is what the wrong_card fault asks for: counted, not a warning.
  report.figures.orders.needsAttentionByReason = countBy(db.orders.filter((o) => o.status === 'needs_attention').map((o) => o.error_code ?? '(none)'));
  const attention = db.orders.filter((o) => o.status === 'needs_attention' && o.error_code !== 'card_mismatch');
  if (attention.length) {
    const reasons = new Map<string, number>();
    for (const o of attention) reasons.set(o.error_code ?? '(none)', (reasons.get(o.error_code ?? '(none)') ?? 0) + 1);
    report.warnings.push(`${attention.length} orders need attention (not expected with these timings): ${[...reasons].map(([c, n]) => `${c} ${n}`).join(', ')}; e.g. ${attention.slice(0, 3).map((o) => o.id).join(', ')}`);
  }
  const unexpectedFailures = db.orders.filter((o) => o.status === 'failed' && o.error_code !== 'pull_request_error');
  if (unexpectedFailures.length) {
    report.warnings.push(`${unexpectedFailures.length} orders failed for another reason than async errors: ${unexpectedFailures.slice(0, 5).map((o) => `${o.id} ${o.error_code}`).join(', ')}`);
  }
}

/** The most of these instants (ms) within any one second. */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1_000) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** Retry-After pauses begun per kind of call, from the service's logs ("partner asked for a pause: no <kind> call ..."). */
function pausesBegun(files: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/partner asked for a pause: no (\w+) call/g)) out[m[1]!] = (out[m[1]!] ?? 0) + 1;
  }
  return out;
}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
