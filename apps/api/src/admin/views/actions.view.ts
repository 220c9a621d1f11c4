import type { AdminSession } from '../auth/admin-sessions.service';
import { type Html, html } from './html';

/**
 * Re-drive and mark-failed for a needs_attention order: one form, two buttons. The reason is required to
 * mark an order failed (the browser checks it, the server enforces it); re-drive skips that check
 * (formnovalidate) and records the reason when one is given. Viewers get no form at all.
 */
export function attentionActions(orderId: string, session: AdminSession, back: string, opts: { redrive?: boolean } = {}): Html {
  if (!session.canAct) return html``;
  const redrive = opts.redrive ?? true;
  const base = `/admin/orders/${encodeURIComponent(orderId)}`;
  return html`<form class="action" method="post" action="${base}/mark-failed" data-order="${orderId}">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <input type="hidden" name="back" value="${back}">
  <input type="text" name="reason" maxlength="500" placeholder="Reason" aria-label="Reason" required>
  ${redrive ? html`<button class="primary" type="submit" formaction="${base}/redrive" formnovalidate title="Call the partner again with the same request ID">Re-drive</button>` : ''}
  <button class="danger" type="submit" title="End the order as failed with this reason">Mark failed</button>
</form>`;
}

/** Dispute (any order): its card secrets are kept past RETENTION_SECRETS_DAYS. A reason is required. */
export function disputeAction(orderId: string, session: AdminSession, back: string): Html {
  if (!session.canAct) return html``;
  return html`<form class="action" method="post" action="/admin/orders/${encodeURIComponent(orderId)}/dispute" data-order="${orderId}">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <input type="hidden" name="back" value="${back}">
  <input type="text" name="reason" maxlength="500" placeholder="Why (the customer's dispute)" aria-label="Dispute reason" required>
  <button type="submit" title="Keep this order's card secrets past the retention">Dispute</button>
</form>`;
}

/**
 * Reveal of a card kept for a refund or reuse (admins only): the answer shows its code, PIN and PDF link
 * once, and the order's timeline records who, which card and why. A reason is required.
 */
export function revealAction(orderId: string, partnerCardId: string, session: AdminSession): Html {
  if (!session.canAct) return html``;
  return html`<form class="action" method="post" action="/admin/orders/${encodeURIComponent(orderId)}/reveal-card" data-reveal="${partnerCardId}">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <input type="hidden" name="card" value="${partnerCardId}">
  <input type="text" name="reason" maxlength="500" placeholder="Why (e.g. the partner's refund ticket)" aria-label="Reason to reveal the card" required>
  <button type="submit" title="Show this card's code, PIN and PDF link once; recorded on the order's timeline">Reveal</button>
</form>`;
}
