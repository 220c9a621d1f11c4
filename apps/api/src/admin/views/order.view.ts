import { isOpenAttempt } from '@cardpull/orders';
import { traceIdFrom } from '@cardpull/platform';
import type { AdminSession } from '../auth/admin-sessions.service';
import type { OrderPageModel } from '../orders/order-inspector.service';
import { attentionActions, disputeAction, revealAction } from './actions.view';
import { badge, dash, json, money, orDash, time } from './format';
import { type Html, html } from './html';
import { page, type PageContext } from './layout';

function facts(m: OrderPageModel): Html {
  const o = m.order;
  return html`<section class="card" aria-label="Order">
  <dl class="facts">
    <dt>Client</dt><dd>${o.client}</dd>
    <dt>Idempotency-Key</dt><dd class="mono">${o.idempotencyKey}</dd>
    <dt>Gift card</dt><dd>${o.giftCardCode} · ${money(o.amount)} · ${o.mode}</dd>
    <dt>Created</dt><dd>${time(o.createdAt)}</dd>
    <dt>Updated</dt><dd>${time(o.updatedAt)}</dd>
    <dt>Completed</dt><dd>${time(o.completedAt)}</dd>
    <dt>Next step</dt><dd>${o.nextStep ? html`${o.nextStep} at ${time(o.nextStepAt)}` : dash}</dd>
    ${o.waitDeadline ? html`<dt>Waits until</dt><dd>${time(o.waitDeadline)}</dd>` : ''}
    <dt>Error</dt><dd>${o.errorCode ? html`<b>${o.errorCode}</b>: ${o.errorMessage ?? ''}` : dash}</dd>
    <dt>Callback URL</dt><dd class="mono">${orDash(o.callbackUrl)}</dd>
    <dt>Metadata</dt><dd class="mono">${o.metadata === null || o.metadata === undefined ? dash : json(o.metadata)}</dd>
    <dt>Trace</dt><dd>${trace(o.traceParent)}</dd>
  </dl>
</section>`;
}

/** The order's price as fixed at intake, and its movements in the ledger (issue 24). */
function moneySection(m: OrderPageModel): Html {
  const p = m.money.price;
  if (!p || p.cost === null) return html`<section class="card" id="order-money" aria-label="Money"><h2>Money</h2><p class="muted small">Accepted before the ledger: no price was fixed.</p></section>`;
  return html`<section class="card" id="order-money" aria-label="Money"><h2>Money</h2>
  <dl class="facts">
    <dt>Face value</dt><dd>${money(p.faceValue)}</dd>
    <dt>Discount</dt><dd data-discount-ppm="${p.discountPpm ?? ''}">${p.discountPpm === null ? dash : `${p.discountPpm / 10_000} %`} <span class="muted small">(in force when accepted)</span></dd>
    <dt>Cost</dt><dd data-cost="${p.cost}"><b>${money(p.cost)}</b></dd>
    <dt>Catalog</dt><dd class="small">${p.name ?? dash}${p.brand ? ` · ${p.brand}` : ''} <span class="mono muted">${orDash(p.catalogSnapshot)}</span></dd>
  </dl>
  ${m.money.movements.length
    ? html`<table class="small"><thead><tr><th>When</th><th>Movement</th><th>Legs</th><th>Who</th></tr></thead><tbody>
    ${m.money.movements.map((t) => html`<tr data-movement="${t.kind}"><td class="nowrap">${time(t.at)}</td><td>${t.kind}</td><td>${t.legs.map((l) => html`<span class="nowrap">${l.account} ${money(Number(l.amount))}</span> `)}</td><td>${t.actor}</td></tr>`)}
    </tbody></table>`
    : html`<p class="muted small">No movement.</p>`}
</section>`;
}

/**
 * The order's trace id (OpenTelemetry, kept with the order at intake): one click selects it all, to paste in
 * the trace viewer or a log search (log lines carry trace_id). The page has no script, so no copy button.
 */
function trace(traceParent: string | null): Html {
  const id = traceIdFrom(traceParent);
  return id
    ? html`<code class="mono copy" data-trace-id="${id}" title="Click to select it all, then copy">${id}</code>`
    : html`<span class="muted">none (traces were off when the order came in: OTEL_EXPORTER_OTLP_ENDPOINT)</span>`;
}

function cardFacts(c: NonNullable<OrderPageModel['card']>, held = false): Html {
  return html`<dl class="facts">
    <dt>Partner card id</dt><dd class="mono">${c.id}</dd>
    <dt>Code</dt><dd class="mono" data-masked="code">${c.code}</dd>
    <dt>PIN</dt><dd class="mono" data-masked="pin">${c.pin_code ?? 'none'}</dd>
    <dt>Amount</dt><dd>${money(c.amount)} (${c.gift_card_code})</dd>
    <dt>Expires</dt><dd>${time(c.expire_at)}</dd>
    <dt>PDF</dt><dd class="muted">${!c.pdf_url ? 'none' : held ? 'held: masked for the caller too (the link opens the card)' : 'available to the caller (not shown here: the link opens the card)'}</dd>
  </dl>`;
}

function card(m: OrderPageModel, session: AdminSession): Html {
  return html`<section class="card" aria-label="Card"><h2>Card</h2>
  ${m.card ? cardFacts(m.card) : html`<p class="muted">No card stored.</p>`}
</section>
${m.otherCards.length
  ? html`<section class="card" aria-label="Other cards"><h2>Other cards <span class="muted small">(the partner billed them: see "Cards to recover")</span></h2>
  <p class="small muted">Held for a refund or reuse: masked for the client too, whatever its scopes.${session.canAct ? ' Reveal one only for its refund or reuse: the reveal is recorded with your reason.' : ' An admin can reveal one (recorded with a reason).'}</p>
  ${m.otherCards.map(
    (c) => html`<div id="card-${c.id}" data-card="${c.id}" data-role="${c.role}"><h3>${badge(c.role)} <span class="mono small">request ID ${c.request_id}</span></h3>
    ${c.mismatch ? html`<p class="warn small">Does not match the order: ${c.mismatch}</p>` : ''}${cardFacts(c, true)}${revealAction(m.order.id, c.id, session)}</div>`,
  )}
</section>`
  : ''}`;
}

function audit(m: OrderPageModel): Html {
  return html`<section class="card" aria-label="Audit trail" id="audit"><h2>Audit trail <span class="muted small">(operator actions)</span></h2>
  ${m.audit.length
    ? html`<table><thead><tr><th>When</th><th>Who</th><th>What</th><th>Why</th></tr></thead><tbody>${m.audit.map(
      (a) => html`<tr data-audit="${a.what}"><td>${time(a.at)}</td><td>${a.who}</td><td>${a.what.replace(/_/g, ' ')}${a.bulkId ? html` <a class="small" href="/admin/bulk/${a.bulkId}">(bulk action)</a>` : ''}</td><td>${a.why || dash}</td></tr>`,
    )}</tbody></table>`
    : html`<p class="muted">No operator has acted on this order.</p>`}
</section>`;
}

function attempts(m: OrderPageModel): Html {
  return html`<section class="card" aria-label="Attempts"><h2>Attempts <span class="muted small">(one per partner request ID)</span></h2>
  <table>
    <thead><tr><th>#</th><th>Request ID</th><th>Kind</th><th>State</th><th>Partner status</th><th>Error</th><th class="num">Calls</th><th>First sent</th><th>Last sent</th><th>Unknown since</th><th>404s since</th><th>Created</th></tr></thead>
    <tbody>${m.attempts.map(
      (a) => html`<tr data-request-id="${a.requestId}"><td>${a.seq}</td><td class="mono">${a.requestId}</td><td>${a.kind}</td><td>${badge(a.state)}</td><td>${orDash(a.partnerStatus)}</td>
      <td class="small">${a.errorCode ? html`<b>${a.errorCode}</b> ${a.errorMessage ?? ''}` : dash}</td><td class="num">${a.callCount}</td>
      <td>${time(a.firstSentAt)}</td><td>${time(a.lastSentAt)}</td><td>${time(a.unknownSince)}</td><td>${time(a.notFoundSince)}</td><td>${time(a.createdAt)}</td></tr>`,
    )}</tbody>
  </table>
</section>`;
}

function timeline(m: OrderPageModel): Html {
  return html`<section class="card" aria-label="Timeline"><h2>Timeline</h2>
  <table class="small">
    <thead><tr><th>When</th><th>Event</th><th>Status</th><th>Request ID</th><th>By</th><th>Detail</th></tr></thead>
    <tbody>${m.timeline.map(
      (e) => html`<tr><td>${time(e.at)}</td><td>${e.type}</td><td class="nowrap">${e.fromStatus ?? ''}${e.fromStatus || e.toStatus ? ' → ' : ''}${e.toStatus ?? ''}</td>
      <td class="mono">${orDash(e.requestId)}</td><td>${e.actor}</td><td class="mono">${json(e.detail)}</td></tr>`,
    )}</tbody>
  </table>
</section>`;
}

function callbacks(m: OrderPageModel): Html {
  return html`<section class="card" aria-label="Callbacks"><h2>Callbacks</h2>
  ${m.callbacks.length === 0
    ? html`<p class="muted">No callback for this order (its client has no callback URL, or nothing terminal happened yet).</p>`
    : m.callbacks.map(
      ({ event: e, deliveries }) => html`<h3>${e.type} ${badge(e.state)} <span class="mono muted small">${e.id}</span></h3>
    <div class="small">to <span class="mono">${e.url}</span> · created ${time(e.createdAt)} · ${e.attempts} attempt(s)${e.deliveredAt ? html` · delivered ${time(e.deliveredAt)}` : e.state === 'pending' ? html` · next ${time(e.nextAttemptAt)}` : ''}</div>
    ${deliveries.length
      ? html`<table class="small"><thead><tr><th>When</th><th>HTTP status</th><th>Error</th><th class="num">Duration</th></tr></thead><tbody>${deliveries.map(
        (d) => html`<tr><td>${time(d.at)}</td><td>${orDash(d.httpStatus)}</td><td>${orDash(d.error)}</td><td class="num">${d.durationMs} ms</td></tr>`,
      )}</tbody></table>`
      : html`<p class="muted small">Not attempted yet.</p>`}`,
    )}
</section>`;
}

/** /admin/orders/:id: everything about one order, and the actions when it needs attention. */
export function orderView(m: OrderPageModel, ctx: PageContext & { session: AdminSession }): Html {
  const o = m.order;
  const back = `/admin/orders/${o.id}`;
  return page(
    `Order ${o.id}`,
    ctx,
    html`<h1>Order <span class="mono">${o.id}</span> ${badge(o.status)}</h1>
${o.status === 'needs_attention' ? attentionSection(m, ctx, back) : ''}
${(o.status === 'completed' || o.status === 'failed') && ctx.session.canAct
  ? html`<section class="card" aria-label="Dispute"><h2>Dispute</h2><p class="small">A customer disputes this order: keep its card secrets past the retention (<span class="mono">RETENTION_SECRETS_DAYS</span>).</p>${disputeAction(o.id, ctx.session, back)}</section>`
  : ''}
${m.completedAfterFailed
  ? html`<div class="warn" role="status" data-notice="completed_after_failed">Completed after it was marked failed: its request ID yielded a card later, which is stored and is the order's card. Tell whoever was told it failed.</div>`
  : ''}
<div class="grid">
  <div>${facts(m)}${moneySection(m)}</div>
  <div>${card(m, ctx.session)}${audit(m)}</div>
</div>
${attempts(m)}
${timeline(m)}
${callbacks(m)}`,
  );
}

export function notFoundView(what: string, ctx: PageContext): Html {
  return page('Not found', ctx, html`<section class="card"><h2>Not found</h2><p>${what}</p><p><a href="/admin">Back to the overview</a></p></section>`);
}

/**
 * What the operator can do about a needs_attention order, and what to ask the partner first: only the
 * partner's word (or the operator's, after asking) kills a request ID (docs/operations.md, "Declare dead").
 */
function attentionSection(m: OrderPageModel, ctx: PageContext & { session: AdminSession }, back: string): Html {
  const o = m.order;
  const latest = m.attempts.at(-1);
  const open = latest && isOpenAttempt(latest.state) ? latest : null;
  const dead = latest?.state === 'failed_definitive';
  const redrive = latest?.state !== 'succeeded';
  return html`<section class="card" aria-label="Needs attention"><h2>Needs attention</h2><p>${o.errorMessage ?? ''}</p>
    ${!redrive ? html`<p class="small">The partner issued a card that does not match this order; it is kept (below). Sending its request ID again would bring the same card back, so there is no re-drive: mark the order failed, and recover the card.</p>` : ''}
    ${open
      ? html`<p class="small" data-open-request-id="${open.requestId}">Request ID <span class="mono">${open.requestId}</span> may still yield a card: cardpull keeps asking the partner about it (ever less often). Ask the partner what became of it. Only if they say it will never yield a card, <b>declare it dead</b> with their answer as the reason; a re-drive then pulls with a new request ID. A re-drive now asks the same ID again with a fresh window.</p>`
      : ''}
    ${dead ? html`<p class="small">Request ID <span class="mono">${latest!.requestId}</span> is dead (${latest!.declaredDeadBy ? `declared by ${latest!.declaredDeadBy}` : "the partner's word"}): a re-drive pulls with a new request ID.</p>` : ''}
    ${ctx.session.canAct
      ? attentionActions(o.id, ctx.session, back, { redrive, openId: open?.requestId ?? null, deadId: dead })
      : html`<p class="muted small">Read-only: an admin can re-drive it, declare its request ID dead, or mark it failed.</p>`}</section>`;
}
