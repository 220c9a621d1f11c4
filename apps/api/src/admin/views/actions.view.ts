import type { AdminSession } from '../auth/admin-sessions.service';
import { type Html, html } from './html';

/**
 * The operator's actions on a needs_attention order: one form, three buttons. Declare dead and mark failed
 * need a reason (the browser checks it, the server enforces it): what the partner said of the request ID
 * (its ticket). Re-drive skips that check (formnovalidate) and records the reason when one is given; it asks
 * the same request ID again, or pulls with a new one once the old one was declared dead (`deadId`). Viewers
 * get no form at all.
 */
export function attentionActions(orderId: string, session: AdminSession, back: string, opts: { redrive?: boolean; openId?: string | null; deadId?: boolean } = {}): Html {
  if (!session.canAct) return html``;
  const redrive = opts.redrive ?? true;
  const base = `/admin/orders/${encodeURIComponent(orderId)}`;
  const redriveTitle = opts.deadId ? 'Pull with a NEW request ID (the old one was declared dead)' : 'Ask the partner again with the same request ID';
  return html`<form class="action" method="post" action="${base}/mark-failed" data-order="${orderId}">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <input type="hidden" name="back" value="${back}">
  <input type="text" name="reason" maxlength="500" placeholder="Reason (the partner's word, e.g. its ticket)" aria-label="Reason" required>
  ${redrive ? html`<button class="primary" type="submit" formaction="${base}/redrive" formnovalidate title="${redriveTitle}">Re-drive</button>` : ''}
  ${opts.openId ? html`<button type="submit" formaction="${base}/declare-dead" title="The partner says request ID ${opts.openId} will never yield a card: stop asking it (an async one is still read for a card); a re-drive then pulls with a new ID">Declare dead</button>` : ''}
  <button class="danger" type="submit" title="End the order as failed with this reason${opts.openId ? ' (declares its open request ID dead)' : ''}">Mark failed</button>
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
