import { ORDER_STATUSES } from '../model/order.types';

/** The operators' filter over orders (the operations page's Orders view and its JSON twin). */
export interface OrderFilter {
  statuses: string[];
  client?: string;
  giftCardCode?: string;
  mode?: 'sync' | 'async';
  /** Created at or after / before (ISO times). */
  from?: Date;
  to?: Date;
  /** The order's error code (marked_failed, outcome_unknown, declared_dead, a partner code...). */
  errorCode?: string;
  /** A key and value inside the order's metadata (string values: metadata->>key = value). */
  meta?: { key: string; value: string };
}

export const FILTER_FIELDS = ['status', 'client', 'gift_card_code', 'mode', 'from', 'to', 'error_code', 'meta'] as const;
const MAX_PAGE = 200;
const SHORT = /^[A-Za-z0-9_.:@-]{1,128}$/;

export interface ParsedFilter {
  filter: OrderFilter;
  /** The next page starts after this order id (the previous page's last). */
  after?: string;
  limit: number;
  /** Every problem with the query, named by its field (an empty list: valid). */
  errors: { field: string; message: string }[];
}

const one = (v: unknown): string | undefined => {
  const x = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof x === 'string' && x.trim() !== '' ? x.trim() : undefined;
};
const many = (v: unknown): string[] =>
  (Array.isArray(v) ? v : [v]).flatMap((x) => (typeof x === 'string' ? x.split(',') : [])).map((x) => x.trim()).filter(Boolean);

/**
 * Reads a filter from a query string (`?status=failed,needs_attention&client=shop&meta=cart_id:c-1&from=...`),
 * as both the HTML page (a GET form: its URL is the filter, to share) and the JSON API take it. Unknown
 * fields are refused, so a typo never widens the filter to every order.
 */
export function parseOrderFilter(query: Record<string, unknown>): ParsedFilter {
  const errors: ParsedFilter['errors'] = [];
  const filter: OrderFilter = { statuses: [] };
  for (const key of Object.keys(query)) {
    if (!(FILTER_FIELDS as readonly string[]).includes(key) && key !== 'after' && key !== 'limit') errors.push({ field: key, message: `unknown filter (use ${FILTER_FIELDS.join(', ')}, after, limit)` });
  }
  for (const s of many(query.status)) {
    if ((ORDER_STATUSES as readonly string[]).includes(s)) filter.statuses.push(s);
    else errors.push({ field: 'status', message: `unknown status ${s} (one of ${ORDER_STATUSES.join(', ')})` });
  }
  for (const [field, key] of [['client', 'client'], ['gift_card_code', 'giftCardCode'], ['error_code', 'errorCode']] as const) {
    const v = one(query[field]);
    if (v === undefined) continue;
    if (SHORT.test(v)) filter[key] = v;
    else errors.push({ field, message: 'letters, digits and _.:@- only, at most 128' });
  }
  const mode = one(query.mode);
  if (mode === 'sync' || mode === 'async') filter.mode = mode;
  else if (mode !== undefined) errors.push({ field: 'mode', message: 'sync or async' });
  for (const field of ['from', 'to'] as const) {
    const v = one(query[field]);
    if (v === undefined) continue;
    const d = new Date(v);
    if (Number.isNaN(d.getTime()) || !/^\d{4}-\d\d-\d\d/.test(v)) errors.push({ field, message: 'an ISO date or time, e.g. 2026-11-25 or 2026-11-25T14:00:00Z' });
    else filter[field] = d;
  }
  const meta = one(query.meta);
  if (meta !== undefined) {
    const at = meta.indexOf(':');
    const key = meta.slice(0, at);
    const value = meta.slice(at + 1);
    if (at < 1 || !SHORT.test(key) || value.length === 0 || value.length > 500) errors.push({ field: 'meta', message: 'key:value, e.g. cart_id:c-1234' });
    else filter.meta = { key, value };
  }
  const after = one(query.after);
  if (after !== undefined && !/^[0-9a-f-]{36}$/i.test(after)) errors.push({ field: 'after', message: 'an order id (the last one of the previous page)' });
  const limitRaw = one(query.limit);
  const limit = limitRaw === undefined ? 50 : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) errors.push({ field: 'limit', message: `1 to ${MAX_PAGE}` });
  return { filter, after: after ?? undefined, limit: Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE ? limit : 50, errors };
}

/** Whether a filter selects anything narrower than every order (bulk actions refuse an empty one). */
export const isEmptyFilter = (f: OrderFilter): boolean =>
  !f.statuses.length && !f.client && !f.giftCardCode && !f.mode && !f.from && !f.to && !f.errorCode && !f.meta;

/**
 * What a bulk action acts on: the filter's orders in needs_attention (the only status the operator's
 * actions apply to); null when the filter asks for other statuses only (nothing to act on).
 */
export function bulkTarget(f: OrderFilter): OrderFilter | null {
  if (f.statuses.length && !f.statuses.includes('needs_attention')) return null;
  return { ...f, statuses: ['needs_attention'] };
}

/** The filter as a query string (the shareable URL, the next page's link). */
export function filterQuery(f: OrderFilter, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  if (f.statuses.length) q.set('status', f.statuses.join(','));
  if (f.client) q.set('client', f.client);
  if (f.giftCardCode) q.set('gift_card_code', f.giftCardCode);
  if (f.mode) q.set('mode', f.mode);
  if (f.from) q.set('from', f.from.toISOString());
  if (f.to) q.set('to', f.to.toISOString());
  if (f.errorCode) q.set('error_code', f.errorCode);
  if (f.meta) q.set('meta', `${f.meta.key}:${f.meta.value}`);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return q.toString();
}

/** The WHERE clause of a filter over `orders o`, with its parameters numbered from `first`. */
export function filterSql(f: OrderFilter, first = 1): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${first + params.length - 1}`;
  };
  const parts: string[] = [];
  if (f.statuses.length) parts.push(`o.status::text = ANY(${p(f.statuses)}::text[])`);
  if (f.client) parts.push(`o.client = ${p(f.client)}`);
  if (f.giftCardCode) parts.push(`o.gift_card_code = ${p(f.giftCardCode)}`);
  if (f.mode) parts.push(`o.mode::text = ${p(f.mode)}`);
  if (f.from) parts.push(`o.created_at >= ${p(f.from)}`);
  if (f.to) parts.push(`o.created_at < ${p(f.to)}`);
  if (f.errorCode) parts.push(`o.error_code = ${p(f.errorCode)}`);
  if (f.meta) parts.push(`o.metadata ->> ${p(f.meta.key)} = ${p(f.meta.value)}`);
  return { where: parts.length ? parts.join(' AND ') : 'true', params };
}
