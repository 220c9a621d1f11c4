import { ORDER_STATUSES, filterQuery, type FilteredOrder, type ParsedFilter } from '@cardpull/orders';
import { badge, money, orderLink, time } from './format';
import { type Html, html } from './html';
import { page, type PageContext } from './layout';

const iso = (d: Date | undefined) => (d ? d.toISOString() : '');

/**
 * /admin/orders: orders by status, client, gift card code, mode, time range, error code and a metadata
 * key:value. A GET form, so the page's URL is the filter (to share); newest first, a page at a time.
 */
export function ordersFilterView(parsed: ParsedFilter, result: { orders: FilteredOrder[]; more: boolean } | null, ctx: PageContext): Html {
  const f = parsed.filter;
  const next = result?.more && result.orders.length ? `/admin/orders?${filterQuery(f, { after: result.orders.at(-1)!.id, limit: String(parsed.limit) })}` : null;
  return page(
    'Orders',
    ctx,
    html`<section class="card" aria-label="Filter orders"><h2>Orders</h2>
<form class="filters" method="get" action="/admin/orders">
  <fieldset><legend>Status</legend>${ORDER_STATUSES.map(
    (s) => html`<label class="small"><input type="checkbox" name="status" value="${s}"${f.statuses.includes(s) ? ' checked' : ''}> ${s.replace(/_/g, ' ')}</label> `,
  )}</fieldset>
  <label>Client <input name="client" value="${f.client ?? ''}" size="12"></label>
  <label>Gift card <input name="gift_card_code" value="${f.giftCardCode ?? ''}" size="16"></label>
  <label>Mode <select name="mode"><option value="">any</option><option${f.mode === 'sync' ? ' selected' : ''}>sync</option><option${f.mode === 'async' ? ' selected' : ''}>async</option></select></label>
  <label>From <input name="from" value="${iso(f.from)}" size="22" placeholder="2026-11-25T14:00:00Z"></label>
  <label>To <input name="to" value="${iso(f.to)}" size="22"></label>
  <label>Error code <input name="error_code" value="${f.errorCode ?? ''}" size="16"></label>
  <label>Metadata <input name="meta" value="${f.meta ? `${f.meta.key}:${f.meta.value}` : ''}" size="18" placeholder="cart_id:c-1234"></label>
  <button class="primary" type="submit">Filter</button> <a class="small" href="/admin/orders">clear</a>
</form>
${parsed.errors.length ? html`<div class="flash error" role="alert">${parsed.errors.map((e) => html`<div><b>${e.field}</b>: ${e.message}</div>`)}</div>` : ''}
${result
  ? html`<p class="small muted">Newest first, ${parsed.limit} a page. The same as JSON: <a class="mono" href="/admin/api/orders?${filterQuery(f)}">/admin/api/orders?${filterQuery(f)}</a>.
    Bulk, on the ones in needs attention (a dry run first): <a href="/admin/bulk?action=redrive&${filterQuery(f)}">re-drive</a> · <a href="/admin/bulk?action=declare_dead&${filterQuery(f)}">declare dead</a> · <a href="/admin/bulk?action=mark_failed&${filterQuery(f)}">mark failed</a></p>
  ${result.orders.length
    ? html`<table id="filtered">
    <thead><tr><th>Order</th><th>Status</th><th>Client</th><th>Gift card</th><th class="num">Amount</th><th>Created</th><th>Error</th></tr></thead>
    <tbody>${result.orders.map(
      (o) => html`<tr data-order="${o.id}"><td>${orderLink(o.id)}</td><td>${badge(o.status)}</td><td>${o.client}</td><td>${o.giftCardCode} <span class="muted">${o.mode}</span></td>
      <td class="num">${money(o.amount)}</td><td class="nowrap">${time(o.createdAt)}</td><td class="small">${o.errorCode ? html`<b class="mono">${o.errorCode}</b>` : ''}</td></tr>`,
    )}</tbody></table>`
    : html`<p class="muted">No order matches.</p>`}
  ${next ? html`<p><a rel="next" href="${next}">Next page</a></p>` : ''}`
  : ''}
</section>`,
  );
}
