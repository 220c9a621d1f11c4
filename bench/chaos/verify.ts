import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { LedgerView } from '@cardpull/testing';
import { checkInvariants, secretsIn, type DbSnapshot } from '../../test/support/invariants';

/**
 * The verdict of a chaos run, from the simulator's ledger (what the partner saw and issued) and our
 * database. Each function returns violation messages (empty when the rule holds).
 */

type LedgerRequest = LedgerView['requests'][number];
const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);

/**
 * Invariants 1, 2, 3, 6 and 7 (test/support/invariants.ts): cards issued for our request IDs = cards
 * stored, one card per order and per request ID, request IDs committed before their first call, a new
 * request ID only after a definitive failure (by our database's states), nothing stuck, no plain text.
 */
export function invariantViolations(db: DbSnapshot, ledger: LedgerView): string[] {
  const problems = checkInvariants(db, ledger).map((p) =>
    p.startsWith('invariant 2:') ? `${p} (a request ID was replaced although its outcome was not a definitive failure)` : p,
  );
  // The run's simulator serves nobody else: a card for a request ID we do not know is a lost card.
  const ours = new Set(db.attempts.map((a) => a.request_id));
  for (const c of ledger.cards) {
    if (!ours.has(c.request_id)) problems.push(`lost card: card ${c.id} was issued for request ID ${c.request_id}, which is not in our database`);
  }
  return problems;
}

/**
 * "No request ID replaced after an unknown outcome", read from the partner's side rather than from our
 * database's states: every attempt we marked failed_definitive (the only ones that may be replaced) got a
 * definitive answer from the partner: its first POST the partner evaluated (not an error_before_issue)
 * answered 404/422 (gift card unknown, invalid amount, out of stock, no funds), or its pull request was
 * made to end in `error` (async_error). A timeout, reset, 5xx or 409 is never one.
 */
export function unjustifiedReplacements(db: DbSnapshot, ledger: LedgerView): string[] {
  const posts = new Map<string, LedgerRequest[]>();
  for (const r of ledger.requests) {
    if (r.method === 'POST' && r.request_id) posts.set(r.request_id, [...(posts.get(r.request_id) ?? []), r]);
  }
  const problems: string[] = [];
  const byOrder = new Map<string, DbSnapshot['attempts']>();
  for (const a of db.attempts) byOrder.set(a.order_id, [...(byOrder.get(a.order_id) ?? []), a]);
  for (const [orderId, attempts] of byOrder) {
    const sorted = [...attempts].sort((a, b) => a.seq - b.seq);
    sorted.forEach((a, i) => {
      if (a.state !== 'failed_definitive') return;
      const sent = (posts.get(a.request_id) ?? []).sort((x, y) => Date.parse(x.at) - Date.parse(y.at));
      const evaluated = sent.find((p) => p.fault !== 'error_before_issue');
      const definitive = sent.some((p) => p.fault === 'async_error') || (evaluated !== undefined && (evaluated.status === 404 || evaluated.status === 422));
      if (definitive) return;
      const next = sorted[i + 1];
      const answers = sent.map((p) => `${p.at.slice(11, 23)} ${p.status ?? 'no answer'}${p.fault ? ` (${p.fault})` : ''}`).join(', ') || 'never sent';
      problems.push(
        `request ID replaced after an unknown outcome: order ${orderId} attempt ${a.seq} (${a.request_id}) is failed_definitive ` +
          `but the partner never gave a definitive failure for it (its POSTs: ${answers})` +
          (next ? `; replaced by ${next.request_id}` : '; the order was failed on it'),
      );
    });
  }
  return problems;
}

/**
 * Invariant 5 from the partner's side: no request ID in flight twice at once. A POST is in flight from its
 * arrival until the earlier of its end (answer written or connection closed) and arrival +
 * PARTNER_TIMEOUT_MS (our client had given up by then). Same reading as overlappingPosts in
 * test/recovery/support/recovery.ts, copied because that file pulls the in-process stack (Nest modules).
 */
export function overlappingPosts(ledger: LedgerView, timeoutMs: number): string[] {
  const byId = new Map<string, LedgerRequest[]>();
  for (const r of ledger.requests) {
    if (r.method === 'POST' && r.request_id) byId.set(r.request_id, [...(byId.get(r.request_id) ?? []), r]);
  }
  const until = (r: LedgerRequest) => {
    const deadline = Date.parse(r.at) + timeoutMs;
    return r.finished_at ? Math.min(Date.parse(r.finished_at), deadline) : deadline;
  };
  const problems: string[] = [];
  for (const [requestId, list] of byId) {
    const sorted = [...list].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    for (let i = 0; i < sorted.length; i++) {
      for (const second of sorted.slice(i + 1)) {
        const first = sorted[i]!;
        if (Date.parse(second.at) < until(first)) {
          problems.push(
            `request ID ${requestId} sent twice at once: POST ${first.path} at ${first.at} (ended ${first.finished_at ?? 'never'}, ${first.status ?? 'no answer'}` +
              `${first.fault ? `, ${first.fault}` : ''}) and again at ${second.at}`,
          );
        }
      }
    }
  }
  return problems;
}

/** Invariant 7 in the logs: no card code or PIN in any captured file. Answers violations and the bytes read. */
export function secretsInFiles(files: string[], ledger: LedgerView): { problems: string[]; bytes: number } {
  const problems: string[] = [];
  let bytes = 0;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    bytes += text.length;
    const found = secretsIn(text, ledger);
    if (found.length) problems.push(`secrets in log ${basename(file)}: ${found.length} (${found.slice(0, 5).join('; ')}${found.length > 5 ? '; ...' : ''})`);
  }
  return { problems, bytes };
}

/** Invariant 7 elsewhere: a text dump (the database, Redis) holds no card code or PIN. */
export function secretsInText(label: string, text: string, ledger: LedgerView): string[] {
  const found = secretsIn(text, ledger);
  return found.length ? [`secrets in ${label}: ${found.length} (${found.slice(0, 5).join('; ')}${found.length > 5 ? '; ...' : ''})`] : [];
}

/** Orders that are not terminal (completed, failed, needs_attention) at the end of the quiet wait. */
export function notTerminal(db: DbSnapshot, quietTimeoutS: number): string[] {
  const open = db.orders.filter((o) => !TERMINAL.has(o.status));
  if (!open.length) return [];
  const byStatus = new Map<string, number>();
  for (const o of open) byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
  const sample = open.slice(0, 5).map((o) => `${o.id} ${o.status} next ${o.next_step ?? '-'} at ${o.next_step_at?.toISOString() ?? '-'}`);
  return [
    `${open.length} orders not terminal ${quietTimeoutS} s after the faults stopped (${[...byStatus].map(([s, n]) => `${s} ${n}`).join(', ')}): ${sample.join('; ')}`,
  ];
}

/** Every order the API said it created is in the database (and nothing else is). */
export function intakeConsistency(createdIds: string[], db: DbSnapshot): string[] {
  const inDb = new Set(db.orders.map((o) => o.id));
  const created = new Set(createdIds);
  const missing = createdIds.filter((id) => !inDb.has(id));
  const extra = db.orders.filter((o) => !created.has(o.id));
  const problems: string[] = [];
  if (missing.length) problems.push(`${missing.length} orders answered 202/200 by the API are not in the database: ${missing.slice(0, 5).join(', ')}`);
  if (extra.length) problems.push(`${extra.length} orders in the database were never confirmed to the caller (a POST that failed after committing?): ${extra.slice(0, 5).map((o) => o.id).join(', ')}`);
  return problems;
}
