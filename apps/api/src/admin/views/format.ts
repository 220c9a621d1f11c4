import { type Html, html } from './html';

const asDate = (value: Date | string | null | undefined): Date | null => (value === null || value === undefined ? null : new Date(value));

/** UTC, to the second: operators compare these with partner logs. */
export function time(value: Date | string | null | undefined): Html {
  const d = asDate(value);
  if (!d || Number.isNaN(d.getTime())) return html`<span class="muted">-</span>`;
  const text = d.toISOString().replace('T', ' ').slice(0, 19);
  return html`<span class="nowrap" title="${d.toISOString()}">${text}</span>`;
}

/** "4 min ago", for how long something has been waiting. */
export function ago(value: Date | string | null | undefined, now = Date.now()): string {
  const d = asDate(value);
  if (!d) return '-';
  const s = Math.max(0, Math.round((now - d.getTime()) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/** Amounts are integers in minor units (cents). */
export const money = (minor: number): string => units(minor / 100);

/** A decimal amount in currency units (the partner's balance), grouped: 1,000,000.00. */
export const units = (amount: number): string => amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export const badge = (status: string): Html => html`<span class="badge s-${status}">${status.replace(/_/g, ' ')}</span>`;

export const orderLink = (id: string, short = true): Html =>
  html`<a class="mono nowrap" href="/admin/orders/${encodeURIComponent(id)}" title="${id}">${short ? `${id.slice(0, 8)}…${id.slice(-4)}` : id}</a>`;

export const dash = html`<span class="muted">-</span>`;

export const orDash = (value: unknown): Html | string => (value === null || value === undefined || value === '' ? dash : String(value));

/** A compact one-line JSON of an event's detail. */
export const json = (value: unknown): string => (value === null || value === undefined ? '' : JSON.stringify(value));
