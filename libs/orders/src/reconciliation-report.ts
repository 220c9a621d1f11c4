import type { Pool } from 'pg';
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
  completed_at: string | null;
  flags: string[];
}

interface Raw {
  id: string;
  client: string;
  created_at: Date;
  status: string;
  mode: string;
  gift_card_code: string;
  amount: number;
  completed_at: Date | null;
  attempts: { request_id: string; state: string; partner_status: string | null }[];
  card_id: string | null;
  card_request_id: string | null;
  card_amount: number | null;
  card_gift_card_code: string | null;
}

/**
 * Every order created in [from, to) with its request IDs, the partner's outcome of each, and the stored
 * card, flagging any mismatch between them; with `partner`, also checks stored cards and open async
 * attempts against the partner (GET /cards/:id, GET /pull_requests/:id; never a POST).
 */
export async function reconciliationReport(pool: Pool, from: Date, to: Date, partner?: PartnerClient): Promise<ReportRow[]> {
  const { rows } = await pool.query<Raw>(
    `SELECT o.id, o.client, o.created_at, o.status, o.mode, o.gift_card_code, o.amount, o.completed_at,
            (SELECT json_agg(json_build_object('request_id', a.request_id, 'state', a.state, 'partner_status', a.partner_status) ORDER BY a.seq)
               FROM attempts a WHERE a.order_id = o.id) AS attempts,
            c.partner_card_id AS card_id, c.request_id AS card_request_id, c.amount AS card_amount, c.gift_card_code AS card_gift_card_code
     FROM orders o LEFT JOIN cards c ON c.order_id = o.id
     WHERE o.created_at >= $1 AND o.created_at < $2 ORDER BY o.created_at, o.id`,
    [from, to],
  );
  const report: ReportRow[] = [];
  for (const r of rows) {
    const flags = localFlags(r);
    if (partner) flags.push(...(await partnerFlags(r, partner)));
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
      card_id: r.card_id,
      card_request_id: r.card_request_id,
      completed_at: r.completed_at?.toISOString() ?? null,
      flags,
    });
  }
  return report;
}

function localFlags(r: Raw): string[] {
  const flags: string[] = [];
  const succeeded = r.attempts.filter((a) => a.state === 'succeeded');
  if (r.status === 'completed' && !r.card_id) flags.push('completed_without_card');
  if (r.card_id && r.status !== 'completed') flags.push('card_without_completion');
  if (succeeded.length > 1) flags.push('several_succeeded_attempts');
  if (succeeded.length === 1 && succeeded[0]!.request_id !== r.card_request_id) flags.push('succeeded_attempt_without_its_card');
  if (r.card_request_id && !succeeded.some((a) => a.request_id === r.card_request_id)) flags.push('card_from_an_attempt_not_succeeded');
  if (r.attempts.slice(0, -1).some((a) => a.state !== 'failed_definitive')) flags.push('new_request_id_before_a_definitive_failure');
  if (r.card_id && (r.card_amount !== r.amount || r.card_gift_card_code !== r.gift_card_code)) flags.push('card_differs_from_order');
  if (r.attempts.at(-1)?.state === 'unknown' && r.status === 'needs_attention') flags.push('unknown_outcome');
  return flags;
}

async function partnerFlags(r: Raw, partner: PartnerClient): Promise<string[]> {
  const flags: string[] = [];
  if (r.card_id) {
    const out = await partner.getCard(r.card_id);
    if (out.kind === 'not_found') flags.push('partner_card_missing');
    else if (out.kind === 'success' && (out.value.amount !== r.card_amount || out.value.gift_card_code !== r.card_gift_card_code)) flags.push('partner_card_differs');
    else if (out.kind !== 'success') flags.push(`partner_card_unverified:${out.kind}`);
  }
  for (const a of r.attempts) {
    if (r.mode !== 'async' || a.state === 'succeeded' || a.state === 'failed_definitive') continue;
    const out = await partner.getPullRequest(a.request_id);
    if (out.kind === 'success' && out.value.status === 'success' && out.value.card?.id !== r.card_id) flags.push(`partner_has_card:${a.request_id}`);
  }
  if (r.mode === 'sync' && r.attempts.at(-1)?.state === 'unknown') flags.push('sync_unknown_not_verifiable_without_a_post');
  return flags;
}

const CSV_COLUMNS: (keyof ReportRow)[] = [
  'order_id', 'client', 'created_at', 'status', 'mode', 'gift_card_code', 'amount', 'request_ids',
  'attempt_states', 'partner_statuses', 'card_id', 'card_request_id', 'completed_at', 'flags',
];

export function toCsv(rows: ReportRow[]): string {
  const cell = (v: unknown) => {
    const text = Array.isArray(v) ? v.map((x) => x ?? '').join(';') : v === null || v === undefined ? '' : String(v);
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [CSV_COLUMNS.join(','), ...rows.map((r) => CSV_COLUMNS.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
}
