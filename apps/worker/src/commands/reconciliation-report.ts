import type { Pool } from 'pg';
import { reportOrders, type ReportOrder } from '@cardpull/orders';
import type { PartnerClient } from '@cardpull/partner-client';

export interface ReportRow {
  order_id: string;
  client: string;
  created_at: string;
  status: string;
  mode: string;
  gift_card_code: string;
  amount: number;
  request_ids: string[];
  attempt_states: string[];
  partner_statuses: (string | null)[];
  card_id: string | null;
  card_request_id: string | null;
  /** Every other card stored for the order, as `<role>:<partner card id>@<request id>` (surplus, mismatch). */
  other_cards: string[];
  completed_at: string | null;
  flags: string[];
}

type Raw = ReportOrder;
type StoredCardFacts = ReportOrder['cards'][number];

/**
 * Every order created in [from, to) with its request IDs, the partner's outcome of each and every card
 * stored for it (the order's, surplus, mismatched), flagging anything that is not as it should be; with
 * `partner`, also asks the partner (GET /cards/:id, GET /pull_requests/:id; never a POST) about every stored
 * card and every async request ID that did not bring its card, failed ones included: a card the partner
 * has for one of them and we do not is flagged `partner_has_card`.
 */
export async function reconciliationReport(pool: Pool, from: Date, to: Date, partner?: PartnerClient): Promise<ReportRow[]> {
  const rows = await reportOrders(pool, from, to);
  const report: ReportRow[] = [];
  for (const r of rows) {
    const flags = localFlags(r);
    if (partner) flags.push(...(await partnerFlags(r, partner)));
    const own = r.cards.find((c) => c.role === 'order') ?? null;
    report.push({
      order_id: r.id,
      client: r.client,
      created_at: r.created_at.toISOString(),
      status: r.status,
      mode: r.mode,
      gift_card_code: r.gift_card_code,
      amount: r.amount,
      request_ids: r.attempts.map((a) => a.request_id),
      attempt_states: r.attempts.map((a) => a.state),
      partner_statuses: r.attempts.map((a) => a.partner_status),
      card_id: own?.partner_card_id ?? null,
      card_request_id: own?.request_id ?? null,
      other_cards: r.cards.filter((c) => c.role !== 'order').map((c) => `${c.role}:${c.partner_card_id}@${c.request_id}`),
      completed_at: r.completed_at?.toISOString() ?? null,
      flags,
    });
  }
  return report;
}

function localFlags(r: Raw): string[] {
  const flags: string[] = [];
  const own = r.cards.find((c) => c.role === 'order');
  if (r.status === 'completed' && !own) flags.push('completed_without_card');
  if (own && r.status !== 'completed') flags.push('card_without_completion');
  for (const c of r.cards) {
    if (c.role !== 'order') flags.push(`${c.role === 'surplus' ? 'surplus_card' : 'card_mismatch'}:${c.request_id}`);
  }
  for (const a of r.attempts) {
    if (a.state === 'succeeded' && !r.cards.some((c) => c.request_id === a.request_id)) flags.push(`succeeded_attempt_without_its_card:${a.request_id}`);
  }
  for (const c of r.cards) {
    if (r.attempts.find((a) => a.request_id === c.request_id)?.state !== 'succeeded') flags.push(`card_from_an_attempt_not_succeeded:${c.request_id}`);
  }
  // A replaced request ID must have been dead; one that brought a card after all (a surplus) was not.
  if (r.attempts.slice(0, -1).some((a) => a.state !== 'failed_definitive')) flags.push('new_request_id_before_a_definitive_failure');
  if (own && (own.amount !== r.amount || own.gift_card_code !== r.gift_card_code)) flags.push('card_differs_from_order');
  const open = r.attempts.filter((a) => a.state === 'unknown' || a.state === 'sent');
  if (r.status === 'needs_attention' && open.length) flags.push('outcome_unknown');
  if ((r.status === 'failed' || r.status === 'completed') && open.length) flags.push(...open.map((a) => `open_attempt_on_${r.status}_order:${a.request_id}`));
  return flags;
}

async function partnerFlags(r: Raw, partner: PartnerClient): Promise<string[]> {
  const flags: string[] = [];
  for (const c of r.cards) {
    const out = await partner.getCard(c.partner_card_id);
    if (out.kind === 'not_found') flags.push(`partner_card_missing:${c.partner_card_id}`);
    else if (out.kind === 'success' && (out.value.amount !== c.amount || out.value.gift_card_code !== c.gift_card_code)) flags.push(`partner_card_differs:${c.partner_card_id}`);
    else if (out.kind !== 'success') flags.push(`partner_card_unverified:${c.partner_card_id}:${out.kind}`);
  }
  const stored = new Set(r.cards.map((c) => c.partner_card_id));
  for (const a of r.attempts) {
    // Every async request ID that did not bring its card, the failed ones too: the partner may hold one.
    if (r.mode !== 'async' || r.cards.some((c) => c.request_id === a.request_id) || a.state === 'created') continue;
    const out = await partner.getPullRequest(a.request_id);
    if (out.kind === 'success' && out.value.status === 'success' && out.value.card && !stored.has(out.value.card.id)) flags.push(`partner_has_card:${a.request_id}`);
    else if (out.kind === 'unknown' || out.kind === 'credentials') flags.push(`partner_unverified:${a.request_id}:${out.kind}`);
  }
  for (const a of r.attempts) {
    const unsettled = a.state === 'unknown' || a.state === 'sent' || a.error_code === 'stored_answer';
    if (r.mode === 'sync' && unsettled) flags.push(`sync_not_verifiable_without_a_post:${a.request_id}`);
  }
  return flags;
}

const CSV_COLUMNS: (keyof ReportRow)[] = [
  'order_id', 'client', 'created_at', 'status', 'mode', 'gift_card_code', 'amount', 'request_ids',
  'attempt_states', 'partner_statuses', 'card_id', 'card_request_id', 'other_cards', 'completed_at', 'flags',
];

export function toCsv(rows: ReportRow[]): string {
  const cell = (v: unknown) => {
    const text = Array.isArray(v) ? v.map((x) => x ?? '').join(';') : v === null || v === undefined ? '' : String(v);
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [CSV_COLUMNS.join(','), ...rows.map((r) => CSV_COLUMNS.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
}
