import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { LedgerView } from '@cardpull/testing';
import { checkInvariants, declaredDeadWithoutWord, secretsIn, type DbSnapshot } from '@cardpull/testing';

/**
 * The verdict of a chaos run, from the simulator's ledger (what the partner saw and issued) and our
 * database. Each function returns violation messages (empty when the rule holds).
 */

type LedgerRequest = LedgerView['requests'][number];
const TERMINAL = new Set(['completed', 'failed', 'needs_attention']);

/**
 * Invariants 1, 2, 3, 6 and 7 (libs/testing/src/invariants.ts): cards issued for our request IDs = cards
 * stored, one card per order and per request ID, request IDs committed before their first call, a new
 * request ID only after the previous one was dead by the partner's word or an operator's (by our database's
 * rows), nothing stuck, no plain text.
 */
export function invariantViolations(db: DbSnapshot, ledger: LedgerView): string[] {
  const problems = checkInvariants(db, ledger).map((p) =>
    p.startsWith('invariant 2:') && p.includes('got a new request ID after') ? `${p} (a request ID was replaced although it was not proven dead)` : p,
  );
  // The run's simulator serves nobody else: a card for a request ID we do not know is a lost card.
  const ours = new Set(db.attempts.map((a) => a.request_id));
  for (const c of ledger.cards) {
    if (!ours.has(c.request_id)) problems.push(`lost card: card ${c.id} was issued for request ID ${c.request_id}, which is not in our database`);
  }
  return problems;
}

export interface MoneyCounts {
  /** Cards the partner issued that are not stored (the run's simulator serves nobody else). */
  lostCards: string[];
  /** Orders for whose request IDs the partner issued more than one card. */
  ordersWithTwoCards: string[];
  /** Request IDs minted while an earlier one of the same order could still yield a card. */
  newIdsWhileLive: string[];
  /**
   * Request IDs declared dead (failed_definitive) without the partner's word about them (async status
   * `error`, or a definitive business error answered to their first send) and without an operator's
   * declaration (declared_dead_at). The run has no operator, so any such ID was declared dead by inference.
   */
  declaredDeadWithoutOperator: string[];
}

/**
 * The four counts the money-safety promise comes down to, from the partner's side (the simulator's
 * ledger) against our database:
 *  - a lost card: issued by the partner, not stored;
 *  - an order that caused two cards: more than one card issued across its request IDs;
 *  - a new request ID minted (its attempt committed at T) while an earlier ID of the order could still
 *    yield a card: the partner had accepted a pull under it at or before T that had not ended in `error`
 *    by T, or it yielded a card at any time;
 *  - a request ID declared dead without the partner's word or an operator's, from our database alone (the
 *    run's database is fresh): `state = 'failed_definitive' AND declared_dead_at IS NULL AND NOT
 *    coalesce(partner_status = 'error' OR (unknown_since IS NULL AND error_code IN (gift_card_not_found,
 *    invalid_amount, out_of_stock, not_enough_funds)), false)` (declaredDeadWithoutWord).
 */
export function moneyCounts(db: DbSnapshot, ledger: LedgerView): MoneyCounts {
  const stored = new Set(db.cards.map((c) => c.partner_card_id));
  const orderOf = new Map(db.attempts.map((a) => [a.request_id, a.order_id]));
  const lostCards = ledger.cards
    .filter((c) => !stored.has(c.id))
    .map((c) => `card ${c.id} issued for request ID ${c.request_id}${orderOf.has(c.request_id) ? ` (order ${orderOf.get(c.request_id)})` : ' (not one of ours)'} is not stored`);
  const cardsPerOrder = new Map<string, string[]>();
  for (const c of ledger.cards) {
    const order = orderOf.get(c.request_id);
    if (order) cardsPerOrder.set(order, [...(cardsPerOrder.get(order) ?? []), `${c.id}@${c.request_id}`]);
  }
  const ordersWithTwoCards = [...cardsPerOrder].filter(([, cards]) => cards.length > 1).map(([order, cards]) => `order ${order} caused ${cards.length} cards: ${cards.join(', ')}`);
  const pullsOf = new Map<string, LedgerView['pulls']>();
  for (const p of ledger.pulls) pullsOf.set(p.request_id, [...(pullsOf.get(p.request_id) ?? []), p]);
  const byOrder = new Map<string, DbSnapshot['attempts']>();
  for (const a of db.attempts) byOrder.set(a.order_id, [...(byOrder.get(a.order_id) ?? []), a]);
  const newIdsWhileLive: string[] = [];
  for (const [orderId, list] of byOrder) {
    const attempts = [...list].sort((a, b) => a.seq - b.seq);
    attempts.slice(1).forEach((minted, i) => {
      const at = minted.created_at.getTime();
      for (const earlier of attempts.slice(0, i + 1)) {
        const live = (pullsOf.get(earlier.request_id) ?? []).find(
          (p) => p.outcome === 'card' || (Date.parse(p.accepted_at) <= at && !(p.outcome === 'error' && p.finished_at !== null && Date.parse(p.finished_at) <= at)),
        );
        if (live) {
          newIdsWhileLive.push(
            `order ${orderId}: request ID ${minted.request_id} minted at ${minted.created_at.toISOString()} while ${earlier.request_id} could still yield a card ` +
              `(its pull accepted ${live.accepted_at}, ${live.outcome ? `ended ${live.outcome} at ${live.finished_at}` : 'still running'})`,
          );
        }
      }
    });
  }
  const declaredDeadWithoutOperator = db.attempts
    .filter(declaredDeadWithoutWord)
    .map(
      (a) =>
        `order ${a.order_id}: request ID ${a.request_id} declared dead without the partner's word or an operator's ` +
        `(error code ${a.error_code ?? 'none'}, partner status ${a.partner_status ?? 'none'}${a.unknown_since ? ', after an unknown outcome' : ''})`,
    );
  return { lostCards, ordersWithTwoCards, newIdsWhileLive, declaredDeadWithoutOperator };
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

/**
 * Orders that wait on a request ID of unknown outcome which their step still asks about (collect.ts
 * IN_DOUBT_SQL): the rule's answer to a partner that never gives its word (a first send whose answer was
 * lost, replayed as out_of_stock ever after, say): the same ID, asked on, and needs_attention past the window.
 */
export function inDoubt(db: DbSnapshot): { orderId: string; requestId: string; lastAnswer: string }[] {
  const byOrder = new Map(db.orders.map((o) => [o.id, o]));
  return db.attempts
    .filter((a) => (a.state === 'sent' || a.state === 'unknown') && a.unknown_since !== null && byOrder.get(a.order_id)?.next_step)
    .filter((a) => !['completed', 'failed'].includes(byOrder.get(a.order_id)!.status))
    .map((a) => ({ orderId: a.order_id, requestId: a.request_id, lastAnswer: a.error_code ?? 'unknown' }));
}

/** Orders that are not terminal (completed, failed, needs_attention) nor in doubt (inDoubt) at the end of the quiet wait. */
export function notTerminal(db: DbSnapshot, quietTimeoutS: number): string[] {
  const doubt = new Set(inDoubt(db).map((d) => d.orderId));
  const open = db.orders.filter((o) => !TERMINAL.has(o.status) && !doubt.has(o.id));
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
