import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimLimitsView } from '@cardpull/sim-contract';
import type { LedgerTotals } from '@cardpull/testing';
import type { ChaosSettings } from './settings';

/** The outcome of a chaos run: what was done, what was seen, what broke. Holds no card code or PIN. */
export interface ChaosReport {
  ok: boolean;
  /** Set when the run itself could not be carried out (build, start-up, ...). */
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
  durationS: number | null;
  reportDir: string;
  settings: ChaosSettings;
  build: string | null;
  postgres: { kind: 'dedicated' | 'shared'; url: string; fallbackReason: string | null; restartMethod: string } | null;
  figures: {
    orders: {
      planned: number;
      sent: number;
      created: number;
      intakeRetries: number;
      /** status -> { sync, async, total } */
      byStatus: Record<string, { sync: number; async: number; total: number }>;
      failedByCode: Record<string, number>;
      attempts: number;
      ordersWithSeveralAttempts: number;
      /** needs_attention orders by reason (card_mismatch: the wrong_card fault). */
      needsAttentionByReason: Record<string, number>;
      /** Orders waiting on a request ID of unknown outcome, still asked (verify.ts inDoubt), by the partner's last answer. */
      inDoubt?: { count: number; byLastAnswer: Record<string, number> };
    };
    cards: { issuedForOurRequestIds: number; issuedTotal: number; stored: number; byRole: Record<string, number> };
    /** The money-safety promise in four counts (verify.ts moneyCounts); each must be 0. */
    money: { lostCards: number; ordersWithTwoCards: number; newIdsWhileLive: number; declaredDeadWithoutOperator: number } | null;
    /** The ledger against the orders (libs/testing checkLedger): its totals and how many rules it broke (must be 0). */
    ledger: (LedgerTotals & { problems: number }) | null;
    partner: {
      requests: number;
      posts: number;
      requestIdsSentMoreThanOnce: number;
      faultHits: Record<string, number>;
      /** The partner's own limits (CHAOS_PARTNER_LIMITS) and what they admitted and refused; null: unlimited. */
      limits: SimLimitsView | null;
      /** Retry-After pauses our processes began, per kind of call (their logs: a 429 of the limits or of the rate_limited fault). */
      pausesBegun: Record<string, number>;
      /** The most creations (POST /cards, POST /pull_requests) that reached the partner within one second. */
      creationsBusiestSecond: number;
    };
    kills: { atS: number; worker: string; pid: number; newPid: number | null; restartS: number | null }[];
    /** API or worker processes that exited by themselves (each one is also a violation), started again. */
    crashes: { process: string; pid: number; restartedAs: number | null }[];
    flush: { atS: number; keys: number } | null;
    /** On a Redis Cluster: the master holding the queues killed (its port) and how long until its replica served the slot. */
    masterKill: { atS: number; port: number; failoverS: number } | null;
    postgresRestart: { atS: number; downS: number; method: string } | null;
    sendPhaseS: number | null;
    faultPhaseS: number | null;
    timeToQuietS: number | null;
    logs: { files: number; bytesScanned: number };
  };
  violations: string[];
  warnings: string[];
}

export function newReport(settings: ChaosSettings, reportDir: string): ChaosReport {
  return {
    ok: false,
    error: null,
    startedAt: new Date().toISOString(),
    finishedAt: null,
    durationS: null,
    reportDir,
    settings,
    build: null,
    postgres: null,
    figures: {
      orders: { planned: settings.orders, sent: 0, created: 0, intakeRetries: 0, byStatus: {}, failedByCode: {}, attempts: 0, ordersWithSeveralAttempts: 0, needsAttentionByReason: {} },
      cards: { issuedForOurRequestIds: 0, issuedTotal: 0, stored: 0, byRole: {} },
      money: null,
      ledger: null,
      partner: { requests: 0, posts: 0, requestIdsSentMoreThanOnce: 0, faultHits: {}, limits: null, pausesBegun: {}, creationsBusiestSecond: 0 },
      kills: [],
      crashes: [],
      flush: null,
      masterKill: null,
      postgresRestart: null,
      sendPhaseS: null,
      faultPhaseS: null,
      timeToQuietS: null,
      logs: { files: 0, bytesScanned: 0 },
    },
    violations: [],
    warnings: [],
  };
}

/** Adds a check's violations, at most `max` lines of it (the rest counted). */
export function addViolations(report: ChaosReport, check: string, problems: string[], max = 50): void {
  if (!problems.length) return;
  report.violations.push(...problems.slice(0, max).map((p) => `[${check}] ${p}`));
  if (problems.length > max) report.violations.push(`[${check}] ... and ${problems.length - max} more`);
}

export const secs = (ms: number) => Math.round(ms / 100) / 10;

export interface ProgressFigures {
  elapsedS: number;
  sent: number;
  created: number;
  planned: number;
  statuses: Record<string, number> | null;
  kills: number;
  flushed: boolean | null;
  restarted: boolean | null;
  faultsOn: boolean;
}

const SHORT: Record<string, string> = { pending: 'pend', in_progress: 'prog', awaiting_funds: 'funds', awaiting_stock: 'stock', completed: 'done', failed: 'failed', needs_attention: 'attn' };

export function progressLine(p: ProgressFigures): string {
  const st = p.statuses
    ? Object.entries(p.statuses)
        .map(([s, n]) => `${SHORT[s] ?? s} ${n}`)
        .join(' ')
    : '(database down)';
  const mark = (v: boolean | null) => (v === null ? 'off' : v ? 'done' : 'todo');
  return (
    `[chaos ${p.elapsedS.toFixed(0).padStart(4)} s] sent ${p.sent}/${p.planned} created ${p.created} | ${st} | ` +
    `kills ${p.kills} flush ${mark(p.flushed)} pg-restart ${mark(p.restarted)} | faults ${p.faultsOn ? 'ON' : 'off'}`
  );
}

/** The table printed at the end. */
export function summaryLines(r: ChaosReport): string[] {
  const f = r.figures;
  const out: string[] = [];
  const verdict = r.error ? 'COULD NOT RUN' : r.ok ? 'PASSED' : `FAILED (${r.violations.length} violations)`;
  out.push('', `==================== chaos run: ${verdict} ====================`);
  out.push(`orders: ${f.orders.planned} planned, ${f.orders.sent} sent, ${f.orders.created} created (${f.orders.intakeRetries} POSTs retried with the same Idempotency-Key)`);
  out.push('', `  ${'status'.padEnd(18)}${'sync'.padStart(7)}${'async'.padStart(7)}${'total'.padStart(7)}`);
  const rows = Object.entries(f.orders.byStatus);
  const total = { sync: 0, async: 0, total: 0 };
  for (const [status, n] of rows) {
    out.push(`  ${status.padEnd(18)}${String(n.sync).padStart(7)}${String(n.async).padStart(7)}${String(n.total).padStart(7)}`);
    total.sync += n.sync;
    total.async += n.async;
    total.total += n.total;
  }
  out.push(`  ${'all'.padEnd(18)}${String(total.sync).padStart(7)}${String(total.async).padStart(7)}${String(total.total).padStart(7)}`, '');
  if (Object.keys(f.orders.failedByCode).length) out.push(`failed by reason:   ${Object.entries(f.orders.failedByCode).map(([c, n]) => `${c} ${n}`).join(', ')}`);
  out.push(`attempts:           ${f.orders.attempts} request IDs, ${f.orders.ordersWithSeveralAttempts} orders needed more than one`);
  if (f.orders.inDoubt?.count) {
    out.push(`in doubt:           ${f.orders.inDoubt.count} orders wait on a request ID of unknown outcome, still asked (last answer: ${Object.entries(f.orders.inDoubt.byLastAnswer).map(([c, n]) => `${c} ${n}`).join(', ')}); only the partner's word or an operator's ends them`);
  }
  if (Object.keys(f.orders.needsAttentionByReason).length) out.push(`needs attention:    ${Object.entries(f.orders.needsAttentionByReason).map(([c, n]) => `${c} ${n}`).join(', ')}`);
  out.push(`cards:              issued for our request IDs ${f.cards.issuedForOurRequestIds} (of ${f.cards.issuedTotal} issued), stored ${f.cards.stored} (${Object.entries(f.cards.byRole).map(([r, n]) => `${r} ${n}`).join(', ') || 'none'})`);
  out.push(
    f.money
      ? `MONEY:              lost cards ${f.money.lostCards}, orders that caused two cards ${f.money.ordersWithTwoCards}, new request IDs while an earlier one could still yield a card ${f.money.newIdsWhileLive}, ` +
        `IDs declared dead without an operator ${f.money.declaredDeadWithoutOperator}`
      : 'MONEY:              not verified',
  );
  out.push(
    f.ledger
      ? `LEDGER:             ${f.ledger.problems} problems; ${f.ledger.completedOrders} completed orders, each one spent entry at its cost; ${f.ledger.surplusCards} surplus cards, each one surplus entry; ` +
        `sum of all entries ${Object.entries(f.ledger.sums).map(([c, n]) => `${n} ${c}`).join(', ') || '0'}; in_doubt ${Object.entries(f.ledger.balances).filter(([k]) => k.startsWith('in_doubt')).map(([, n]) => n)[0] ?? 0} = ` +
        `the cost of the ${f.ledger.waitingOnUnknown.orders} orders waiting on unknown IDs (${f.ledger.waitingOnUnknown.cost}; face value ${f.ledger.waitingOnUnknown.faceValue})`
      : 'LEDGER:             not verified',
  );
  out.push(`partner:            ${f.partner.requests} requests, ${f.partner.posts} POSTs, ${f.partner.requestIdsSentMoreThanOnce} request IDs sent more than once`);
  out.push(`fault hits:         ${Object.entries(f.partner.faultHits).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
  out.push(`partner limits:     ${limitsLine(f.partner.limits)}; busiest second: ${f.partner.creationsBusiestSecond} creations`);
  out.push(`pauses begun:       ${Object.entries(f.partner.pausesBegun).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'} (Retry-After from the partner, fleet-wide)`);
  out.push(
    `kills:              ${f.kills.length}${f.kills.length ? ` (${f.kills.map((k) => `${k.atS} s ${k.worker} pid ${k.pid}${k.restartS !== null ? `, back in ${k.restartS} s` : ', not restarted'}`).join('; ')})` : ''}`,
  );
  if (f.crashes.length) out.push(`CRASHES:            ${f.crashes.length} (${f.crashes.map((c) => `${c.process} pid ${c.pid}, started again as ${c.restartedAs ?? '-'}`).join('; ')})`);
  out.push(`FLUSHALL:           ${f.flush ? `at ${f.flush.atS} s, ${f.flush.keys} keys` : 'no'}`);
  if (f.masterKill) out.push(`Redis master kill:  at ${f.masterKill.atS} s, port ${f.masterKill.port}, replica serving after ${f.masterKill.failoverS} s`);
  out.push(`Postgres restart:   ${f.postgresRestart ? `at ${f.postgresRestart.atS} s, down ${f.postgresRestart.downS} s (${f.postgresRestart.method})` : 'no'}`);
  if (r.postgres?.kind === 'shared') out.push(`!! Postgres:        SHARED server fallback (${r.postgres.fallbackReason}): no real restart`);
  out.push(`phases:             sending ${f.sendPhaseS ?? '-'} s, faults ${f.faultPhaseS ?? '-'} s, quiet ${f.timeToQuietS ?? 'NOT reached'}${f.timeToQuietS !== null ? ' s after the faults stopped' : ''} (limit ${r.settings.quietTimeoutS} s)`);
  out.push(`logs scanned:       ${f.logs.files} files, ${(f.logs.bytesScanned / 1e6).toFixed(1)} MB`);
  out.push(`run:                ${r.durationS ?? '-'} s in all`);
  if (r.error) out.push(`ERROR:              ${r.error}`);
  out.push(`warnings:           ${r.warnings.length}`);
  for (const w of r.warnings) out.push(`  ! ${w}`);
  out.push(`violations:         ${r.violations.length}`);
  for (const v of r.violations) out.push(`  x ${v}`);
  out.push(`report:             ${join(r.reportDir, 'report.json')}`, '');
  return out;
}

/** "create 60/s: 2000 admitted, 3 refused (0.15 %)" per limited kind; "none" for an unlimited partner. */
export function limitsLine(view: SimLimitsView | null): string {
  if (!view) return 'none';
  const parts = Object.entries(view.limits)
    .filter(([, l]) => l)
    .map(([kind, l]) => {
      const c = view.counts[kind as keyof SimLimitsView['counts']];
      const what = [l!.per_second !== undefined ? `${l!.per_second}/s` : '', l!.in_flight !== undefined ? `${l!.in_flight} in flight` : ''].filter(Boolean).join(', ');
      const share = c.admitted + c.refused ? ((100 * c.refused) / (c.admitted + c.refused)).toFixed(2) : '0.00';
      return `${kind} ${what}: ${c.admitted} admitted, ${c.refused} refused (${share} %)`;
    });
  return parts.join('; ') || 'none';
}

export function writeReport(r: ChaosReport): void {
  writeFileSync(join(r.reportDir, 'report.json'), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(r.reportDir, 'summary.txt'), `${summaryLines(r).join('\n')}\n`);
}
