import type { CatalogChangeRow, GiftCardSummary, ScheduledDiscount } from '@cardpull/orders';
import type { FacialValues } from '@cardpull/partner-client';
import { badge, dash, money, time } from './format';
import { type Html, html } from './html';
import { page, type PageContext } from './layout';

/** Face values as an operator reads them: the fixed amounts, or the free range and its step (currency units). */
export function faceValuesText(f: FacialValues): string {
  return f.type === 'fixed' ? [...f.amounts].sort((a, b) => a - b).map(money).join(', ') : `${money(f.min_amount)} to ${money(f.max_amount)} by ${money(f.step_amount)}`;
}

const pin = (codePin: boolean) => (codePin ? 'with PIN' : 'no PIN');
const giftCardText = (g: GiftCardSummary) => `${g.name} (${g.brand}): ${faceValuesText(g.facial_values)}; discount ${g.discount}; ${pin(g.code_pin)}`;
const schedulesText = (list: ScheduledDiscount[]) => (list.length ? list.map((d) => `${d.value} from ${d.date}`).join('; ') : 'none');

/**
 * One change's before and after in words (issue 25), with what a face value change withdrew and added and
 * which scheduled discounts are new: what the operator and the checkout teams need, not the raw JSON.
 */
export function changeText(c: Pick<CatalogChangeRow, 'kind' | 'before' | 'after' | 'detail'>): { before: string | null; after: string | null; note: string | null } {
  switch (c.kind) {
    case 'added':
      return { before: null, after: giftCardText(c.after as GiftCardSummary), note: null };
    case 'removed':
      return { before: giftCardText(c.before as GiftCardSummary), after: null, note: 'withdrawn: orders for it are refused (gift_card_withdrawn)' };
    case 'face_values_changed': {
      const d = (c.detail ?? {}) as { withdrawn_amounts?: number[]; added_amounts?: number[] };
      const parts = [d.withdrawn_amounts?.length ? `withdrawn ${d.withdrawn_amounts.map(money).join(', ')}` : '', d.added_amounts?.length ? `added ${d.added_amounts.map(money).join(', ')}` : ''];
      return { before: faceValuesText(c.before as FacialValues), after: faceValuesText(c.after as FacialValues), note: parts.filter(Boolean).join('; ') || null };
    }
    case 'code_pin_changed':
      return { before: pin(c.before as boolean), after: pin(c.after as boolean), note: null };
    case 'discount_changed':
      return { before: String(c.before), after: String(c.after), note: 'orders accepted before keep their price' };
    case 'discount_scheduled': {
      const d = (c.detail ?? {}) as { scheduled?: ScheduledDiscount[] };
      return { before: schedulesText(c.before as ScheduledDiscount[]), after: schedulesText(c.after as ScheduledDiscount[]), note: `new: ${schedulesText(d.scheduled ?? [])}` };
    }
  }
}

export function catalogChangesTable(rows: CatalogChangeRow[]): Html {
  return html`<table class="small">
    <thead><tr><th>Detected</th><th>Gift card</th><th>Change</th><th>Before</th><th>After</th></tr></thead>
    <tbody>${rows.map((c) => {
      const t = changeText(c);
      return html`<tr data-change="${c.id}" data-kind="${c.kind}" data-code="${c.giftCardCode}"><td class="nowrap">${time(c.detectedAt)}</td><td class="mono">${c.giftCardCode}</td>
      <td>${badge(c.kind)}${t.note ? html`<div class="muted">${t.note}</div>` : ''}</td><td data-before>${t.before ?? dash}</td><td data-after>${t.after ?? dash}</td></tr>`;
    })}</tbody>
  </table>`;
}

/** The overview's card: the latest few changes, and the way to all of them. */
export function catalogChangesCard(rows: CatalogChangeRow[]): Html {
  return html`<section class="card" id="catalog-changes" aria-label="Catalog changes">
  <h2>Catalog changes <span class="muted">(the partner's, latest first)</span></h2>
  ${rows.length ? catalogChangesTable(rows) : html`<p class="muted small">None recorded: the catalog is as it was first read.</p>`}
  <p class="small"><a href="/admin/catalog-changes" data-all-catalog-changes>All recent catalog changes</a></p>
</section>`;
}

/** /admin/catalog-changes: what the partner's catalog changed, latest first (capped). */
export function catalogChangesView(rows: CatalogChangeRow[], limit: number, ctx: PageContext): Html {
  return page(
    'Catalog changes',
    ctx,
    html`<section class="card" id="catalog-changes" aria-label="Catalog changes">
  <h2>Catalog changes <span class="muted">(${rows.length < limit ? `${rows.length}, latest first` : `the latest ${limit}`})</span></h2>
  <p class="small muted">Each read of the partner's catalog is compared with the one stored before it. A gift card withdrawn, or a face value withdrawn, is refused at intake with the time shown here; orders accepted before keep their price and go on. A discount is a change once it moved by CATALOG_DISCOUNT_CHANGE_THRESHOLD from the one last announced. Clients subscribed to <span class="mono">catalog.changed</span> get each batch at their callback URL.</p>
  ${rows.length ? catalogChangesTable(rows) : html`<p class="muted">None recorded: the catalog is as it was first read.</p>`}
</section>`,
  );
}
