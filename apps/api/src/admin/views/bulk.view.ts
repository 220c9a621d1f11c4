import { BULK_MAX_ORDERS, type BulkActionRow, type FilteredOrder, type ParsedFilter } from '@cardpull/orders';
import type { AdminSession } from '../auth/admin-sessions.service';
import { badge, money, orderLink, time } from './format';
import { type Html, html } from './html';
import { page, type PageContext } from './layout';

const LABEL: Record<string, string> = {
  redrive: 'Re-drive (same request ID while open, a new one once declared dead)',
  declare_dead: "Declare request IDs dead (the partner's word)",
  mark_failed: 'Mark failed (declares open request IDs dead)',
};
/** Actions that need a reason: the partner's word about the request IDs. */
const NEEDS_REASON = new Set(['mark_failed', 'declare_dead']);

/**
 * The dry run of a bulk action: which needs_attention orders the filter selects (how many, and the first
 * of them), and, for an admin, the form that starts it. Nothing is changed until that form is sent.
 */
export function bulkDryRunView(
  m: { action: string; parsed: ParsedFilter; query: string; eligible: string[]; sample: FilteredOrder[]; refused: string | null; every: boolean },
  ctx: PageContext & { session: AdminSession },
): Html {
  const n = m.eligible.length;
  return page(
    'Bulk action: dry run',
    ctx,
    html`<section class="card" id="dry-run" aria-label="Dry run"><h2>${LABEL[m.action] ?? m.action}: dry run</h2>
${m.refused
  ? html`<div class="flash error" role="alert">${m.refused}</div>`
  : html`${m.every ? html`<div class="warn" role="alert" data-every>No filter but the status: this takes <b>every</b> order in needs attention. Narrow it on <a href="/admin/orders?${m.query}">Orders</a> (client, gift card, error code, time range, metadata), or confirm below.</div>` : ''}
  <p>The filter <a class="mono" href="/admin/orders?${m.query}">${m.query || '(none)'}</a> selects <b data-eligible="${n}">${n}</b> order${n === 1 ? '' : 's'} in needs attention${n >= BULK_MAX_ORDERS ? html` (the most one bulk action takes: narrow the filter for the rest)` : ''}. Nothing has changed yet.</p>
  ${m.sample.length ? html`<table><thead><tr><th>Order</th><th>Client</th><th>Gift card</th><th class="num">Amount</th><th>Created</th><th>Error</th></tr></thead><tbody>${m.sample.map(
    (o) => html`<tr data-order="${o.id}"><td>${orderLink(o.id)}</td><td>${o.client}</td><td>${o.giftCardCode}</td><td class="num">${money(o.amount)}</td><td class="nowrap">${time(o.createdAt)}</td><td class="small mono">${o.errorCode ?? ''}</td></tr>`,
  )}</tbody></table>${n > m.sample.length ? html`<p class="small muted">and ${n - m.sample.length} more.</p>` : ''}` : ''}
  ${n && ctx.session.canAct
    ? html`<form class="action" method="post" action="/admin/bulk">
    <input type="hidden" name="csrf" value="${ctx.session.csrfToken}">
    <input type="hidden" name="action" value="${m.action}">
    <input type="hidden" name="filter" value="${m.query}">
    <input type="text" name="reason" maxlength="500" placeholder="Reason (on every order's audit entry)" aria-label="Reason"${NEEDS_REASON.has(m.action) ? ' required' : ''}>
    ${m.every ? html`<label class="small nowrap"><input type="checkbox" name="every" value="yes" required> every order in needs attention</label>` : ''}
    <button class="${NEEDS_REASON.has(m.action) ? 'danger' : 'primary'}" type="submit">${LABEL[m.action] ?? m.action}: ${n} order${n === 1 ? '' : 's'}</button>
  </form>`
    : n
      ? html`<p class="muted small">Read-only: an admin can run it.</p>`
      : ''}`}
</section>`,
  );
}

/** A bulk action's progress; the page reloads itself every 2 s while it runs. */
export function bulkProgressView(b: BulkActionRow, ctx: PageContext): Html {
  const done = b.state === 'done';
  return page(
    `Bulk action ${b.id}`,
    { ...ctx, ...(done ? {} : { refreshS: 2 }) },
    html`<section class="card" id="bulk" aria-label="Bulk action" data-state="${b.state}"><h2>${LABEL[b.action] ?? b.action} ${badge(done ? 'completed' : 'in_progress')}</h2>
  <p>Started by <b>${b.createdBy}</b> ${time(b.createdAt)}; reason: ${b.reason || html`<span class="muted">(none)</span>`}; filter <a class="mono" href="/admin/orders?${b.filter}">${b.filter}</a>.</p>
  <p><progress max="${b.total}" value="${b.position}"></progress> <b data-position="${b.position}">${b.position}</b> of <b>${b.total}</b>: <b>${b.applied}</b> done, <b>${b.skipped}</b> skipped (no longer in needs attention, nothing to declare, or still being asked at the partner)${done && b.finishedAt ? html`, finished ${time(b.finishedAt)}` : ''}.</p>
</section>`,
  );
}
