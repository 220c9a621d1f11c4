import type { RevealedCard } from '../orders/card-reveal.service';
import { badge, money, time } from './format';
import { type Html, html } from './html';
import { page, type PageContext } from './layout';

/**
 * The answer to a reveal: that one card's code, PIN and PDF link, shown once (the page is never cached;
 * the order page keeps showing the card masked). The PDF link is text, not a link: it opens the card.
 */
export function cardRevealView(r: RevealedCard, ctx: PageContext): Html {
  const c = r.card;
  const back = `/admin/orders/${encodeURIComponent(r.orderId)}`;
  return page(
    `Card ${c.id}`,
    ctx,
    html`<h1>Card <span class="mono">${c.id}</span> ${badge(r.role)}</h1>
<section class="card" aria-label="Revealed card" data-revealed="${c.id}">
  <p class="warn small">Shown for this request only, and recorded on the order's timeline (you, now, your reason). This card is not the order's: the partner billed it and it is kept for a refund or reuse. Copy only what the refund or the reuse needs.</p>
  <dl class="facts">
    <dt>Order</dt><dd><a class="mono" href="${back}">${r.orderId}</a></dd>
    <dt>Request ID</dt><dd class="mono">${r.requestId}</dd>
    <dt>Kind</dt><dd>${r.role === 'surplus' ? 'surplus (a second card for the order)' : html`does not match the order${r.mismatch ? html`: ${r.mismatch}` : ''}`}</dd>
    <dt>Code</dt><dd class="mono" data-secret="code">${c.code}</dd>
    <dt>PIN</dt><dd class="mono" data-secret="pin">${c.pin_code ?? 'none'}</dd>
    <dt>PDF link</dt><dd class="mono" data-secret="pdf">${c.pdf_url ?? 'none'}</dd>
    <dt>Amount</dt><dd>${money(c.amount)} (${c.gift_card_code})</dd>
    <dt>Expires</dt><dd>${time(c.expire_at)}</dd>
    <dt>Reason</dt><dd>${r.reason}</dd>
  </dl>
  <p><a href="${back}#audit">Back to the order</a></p>
</section>`,
  );
}
