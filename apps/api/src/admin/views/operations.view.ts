import { isOpenAttempt, type FailureGroup, type PartnerErrorGroup } from '@cardpull/orders';
import type { AdminSession } from '../auth/admin-sessions.service';
import { ATTENTION_LIMIT, EXTRA_CARDS_LIMIT, type ErrorsModel, type OperationsModel, type OrderSummary } from '../operations/operations.service';
import type { PartnerPanelModel } from '../operations/partner-panel.service';
import type { SearchHit } from '../orders/order-inspector.service';
import { attentionActions } from './actions.view';
import { catalogChangesCard } from './catalog-changes.view';
import { ago, badge, dash, money, orderLink, time, units } from './format';
import { type Html, html } from './html';
import { page, type PageContext } from './layout';
import { partnerProfileSection } from './partner-profile.view';

/** The overview's partner errors show this much of a message (the whole of it in the title, and on /admin/errors). */
const PANEL_MESSAGE_MAX = 100;

function counts(model: OperationsModel): Html {
  return html`<section class="card" aria-label="Orders by status">
  <h2>Orders by status <span class="muted">(${model.total} in all)</span></h2>
  <div class="counts">
    ${model.counts.map((c) => html`<div data-status="${c.status}">${badge(c.status)}<b>${c.count}</b></div>`)}
  </div>
</section>`;
}

function attention(model: OperationsModel, session: AdminSession): Html {
  const n = model.counts.find((c) => c.status === 'needs_attention')?.count ?? 0;
  return html`<section class="card" id="attention" aria-label="Needs attention">
  <h2>Needs attention <span class="muted">(${n}${n > ATTENTION_LIMIT ? `, oldest ${ATTENTION_LIMIT} shown` : ''})</span></h2>
  ${model.attention.length === 0
    ? html`<p class="muted">Nothing needs attention.</p>`
    : html`<table>
    <thead><tr><th>Order</th><th>Gift card</th><th>Waiting</th><th>Last answer</th>${session.canAct ? html`<th>Action</th>` : ''}</tr></thead>
    <tbody>${model.attention.map(
      (o) => html`<tr data-order="${o.id}">
      <td>${orderLink(o.id)}<div class="muted small">${o.client} · ${o.mode}</div></td>
      <td>${o.giftCardCode}<div class="muted small">${money(o.amount)}</div></td>
      <td class="nowrap">${ago(o.updatedAt)}</td>
      <td class="small" title="${o.reason ?? ''}">${o.lastErrorCode ? html`<b>${o.lastErrorCode}</b> ${o.lastErrorMessage ?? ''}` : (o.reason ?? dash)}
        ${o.requestId ? html`<div class="muted"><span class="mono">${o.requestId}</span> · ${o.calls ?? 0} calls${o.unknownSince ? html` · unknown since ${time(o.unknownSince)}` : ''}</div>` : ''}</td>
      ${session.canAct ? html`<td>${attentionActions(o.id, session, '/admin', { redrive: o.attemptState !== 'succeeded', openId: isOpenAttempt(o.attemptState) ? o.requestId : null, deadId: o.attemptState === 'failed_definitive' })}</td>` : ''}
    </tr>`,
    )}</tbody>
  </table>`}
</section>`;
}

/**
 * Money in doubt: orders waiting on a request ID of unknown outcome. Each may have been billed; cardpull keeps
 * asking the partner about the same ID and never replaces it unasked (invariant 2). Past the window they need
 * attention: ask the partner, then declare the ID dead on their word, or wait.
 */
function inDoubt(model: OperationsModel): Html {
  const rows = model.inDoubt;
  const total = rows.reduce((n, r) => n + r.orders, 0);
  return html`<section class="card" id="money-in-doubt" aria-label="Money in doubt">
  <h2>Money in doubt <span class="muted">(${total} order${total === 1 ? '' : 's'} waiting on a request ID of unknown outcome)</span></h2>
  ${total === 0
    ? html`<p class="muted">No order waits on a request ID of unknown outcome.</p>`
    : html`<table>
    <thead><tr><th>Status</th><th>Orders</th><th class="num">Face value</th><th>Oldest waits since</th></tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr data-in-doubt="${r.status}"><td>${badge(r.status)}</td><td><b>${r.orders}</b></td><td class="num">${money(r.amount)}</td><td class="nowrap small">${time(r.oldest)} (${ago(r.oldest)})</td></tr>`,
    )}</tbody>
  </table>
  <p class="small muted">Each may have been billed. cardpull asks the partner about the same request ID until it answers (ever less often past the window); nothing replaces it unasked. For one in needs attention: ask the partner, and declare its ID dead only on their word.</p>`}
</section>`;
}

/** Failed and needs_attention orders by cause: what broke, how often, since when (the latest order of each to open). */
export function failureTable(groups: FailureGroup[]): Html {
  return html`<table>
    <thead><tr><th>Cause</th><th>Orders</th><th>First seen</th><th>Last seen</th><th>Latest</th></tr></thead>
    <tbody>${groups.map(
      (f) => html`<tr data-code="${f.code}" data-partner-code="${f.partnerCode}" data-cause-status="${f.status}"><td class="small">${badge(f.status)} <b class="mono">${f.code || '-'}</b>${f.partnerCode && f.partnerCode !== f.code ? html` <span class="muted">partner:</span> <b class="mono">${f.partnerCode}</b>` : ''}<div class="muted">${f.message}</div></td>
      <td><b>${f.count}</b></td><td class="nowrap small">${time(f.firstSeen)}</td><td class="nowrap small">${time(f.lastSeen)}</td><td>${orderLink(f.latestOrderId)}</td></tr>`,
    )}</tbody>
  </table>`;
}

function failures(model: OperationsModel): Html {
  const more = model.failureCauses > model.failures.length;
  return html`<section class="card" id="failures" aria-label="Failures by cause">
  <h2>Failures by cause <span class="muted">(failed and needs attention${more ? `: latest ${model.failures.length} of ${model.failureCauses} causes` : ''})</span></h2>
  ${model.failures.length === 0 ? html`<p class="muted">No failed order, none waiting for attention.</p>` : failureTable(model.failures)}
  ${more ? html`<p class="small"><a href="/admin/errors#failures" data-all-failures>All ${model.failureCauses} causes</a></p>` : ''}
</section>`;
}

/** A partner error message cut to `max` characters (the whole of it in the title). */
const cut = (text: string, max: number): Html => (text.length > max ? html`<span title="${text}">${text.slice(0, max)}…</span>` : html`${text}`);

/** Partner errors by kind: one row however often the partner answered the same way, with its latest as an example. */
export function partnerErrorTable(groups: PartnerErrorGroup[], messageMax: number): Html {
  return html`<table class="small">
    <thead><tr><th>Kind <span class="muted">(call, outcome; the latest)</span></th><th class="num">Count</th><th>Last seen <span class="muted">(first)</span></th></tr></thead>
    <tbody>${groups.map(
      (g) => html`<tr data-error-kind="${[g.endpoint, g.outcome, g.code ?? '', g.httpStatus ?? ''].join(' ')}"><td>${g.endpoint} · <b class="mono">${g.code ?? g.outcome}</b>${g.httpStatus ? ` (${g.httpStatus})` : ''}
        <div class="muted">${cut(g.message, messageMax)}${g.requestId ? html` · <span class="mono">${g.requestId}</span>${g.orderId ? html` · ${orderLink(g.orderId)}` : ''}` : ''}</div></td>
      <td class="num" data-count><b>${g.count}</b></td><td class="nowrap"><span data-last-seen>${time(g.lastSeen)}</span><div class="muted" data-first-seen>${time(g.firstSeen)}</div></td></tr>`,
    )}</tbody>
  </table>`;
}

/** Cards the partner billed that are not their order's card: money to recover (a refund, or reuse). */
function extraCards(model: OperationsModel, session: AdminSession): Html {
  const { surplus, mismatch } = model.extraCardCounts;
  const n = surplus + mismatch;
  return html`<section class="card" id="cards-to-recover" aria-label="Cards to recover">
  <h2>Cards to recover <span class="muted">(${surplus} surplus, ${mismatch} not matching their order${n > EXTRA_CARDS_LIMIT ? `, newest ${EXTRA_CARDS_LIMIT} shown` : ''})</span></h2>
  ${model.extraCards.length === 0
    ? html`<p class="muted">None: every card the partner issued is its order's card.</p>`
    : html`<p class="small muted">The partner billed these; each is kept (never its code here, nor to the client). Quote the request ID to the partner for a refund, or reuse the card${session.canAct ? ' (reveal it on its order: recorded with your reason)' : ''}.</p>
  <table>
    <thead><tr><th>Stored</th><th>Kind</th><th>Partner card id</th><th>Request ID</th><th>Order</th><th>Card</th></tr></thead>
    <tbody>${model.extraCards.map(
      (c) => html`<tr data-card="${c.partnerCardId}" data-role="${c.role}"><td class="nowrap">${time(c.createdAt)}</td><td>${badge(c.role)}</td>
      <td class="mono small">${c.partnerCardId}</td><td class="mono small">${c.requestId}</td><td>${orderLink(c.orderId)} ${badge(c.orderStatus)}</td>
      <td>${c.giftCardCode} · ${money(c.amount)}${c.mismatch ? html`<div class="warn small">${c.mismatch}</div>` : ''}${session.canAct
        ? html` <a class="small" href="/admin/orders/${encodeURIComponent(c.orderId)}#card-${encodeURIComponent(c.partnerCardId)}" title="The card on its order, with the reveal form">reveal…</a>`
        : ''}</td></tr>`,
    )}</tbody>
  </table>`}
</section>`;
}

export function ordersTable(rows: (OrderSummary & { matched?: string })[], withMatch = false): Html {
  return html`<table>
  <thead><tr><th>Order</th><th>Status</th><th>Client</th><th>Gift card</th><th class="num">Amount</th><th>Created</th>${withMatch ? html`<th>Matched</th>` : ''}</tr></thead>
  <tbody>${rows.map(
    (o) => html`<tr data-order="${o.id}"><td>${orderLink(o.id)}</td><td>${badge(o.status)}</td><td>${o.client}</td><td>${o.giftCardCode} <span class="muted">${o.mode}</span></td>
    <td class="num">${money(o.amount)}</td><td>${time(o.createdAt)}</td>${withMatch ? html`<td class="muted">${o.matched ?? ''}</td>` : ''}</tr>`,
  )}</tbody>
</table>`;
}

/** The fleet's limits on partner calls (PARTNER_LIMITS), their state in Redis, and each kind's deadline. */
function traffic(p: PartnerPanelModel): Html {
  const per = (n: number, unit: string) => (n ? html`${Number.isInteger(n) ? n : n.toFixed(1)}${unit}` : html`<span class="muted">unlimited</span>`);
  const paused = p.traffic?.filter((v) => v.pausedUntil) ?? [];
  return html`<h3>Traffic <span class="muted small">(fleet-wide, PARTNER_LIMITS)</span></h3>
  ${paused.map((v) => html`<div class="warn" role="alert" data-paused="${v.scope}"><b>Paused by the partner:</b> no ${v.scope === 'any' ? '' : `${v.scope} `}call from any worker until ${time(v.pausedUntil!)} (Retry-After). Orders wait; nothing is failed.</div>`)}
  ${p.traffic === null
    ? html`<p class="alert">unavailable: Redis did not answer (calls go on without the fleet-wide limits meanwhile)</p>`
    : html`<table class="small" aria-label="Partner traffic">
    <thead><tr><th>Calls</th><th>Limit</th><th>Rate now</th><th>Last s</th><th>In flight</th><th>429s/h</th></tr></thead>
    <tbody>${p.traffic.map(
      (v) => html`<tr data-scope="${v.scope}"><td>${v.scope}</td><td>${per(v.limitPerSecond, '/s')}${v.limitInFlight ? html`, ${v.limitInFlight} in flight` : ''}</td>
      <td>${per(v.ratePerSecond, '/s')}${v.adaptive ? html` <span class="badge">slowed</span>` : ''}</td><td>${v.lastSecond}</td><td>${v.inFlight}</td><td>${v.rateLimitedLastHour}</td></tr>`,
    )}</tbody>
  </table>`}
  <p class="small muted" data-timeouts>Timeouts: ${p.timeouts.sync} ms sync pull, ${p.timeouts.create} ms async creation, ${p.timeouts.poll} ms poll, ${p.timeouts.read} ms read</p>
  ${partnerClock(p.clock)}`;
}

/** Calls are signed with the partner's time; far off, a clock (ours or the partner's) needs a look. */
function partnerClock(clock: PartnerPanelModel['clock']): Html {
  const off = Math.abs(clock.offsetS) > 10;
  const text = clock.answers === 0 ? 'not read yet' : `${clock.offsetS >= 0 ? '+' : '-'}${Math.abs(clock.offsetS).toFixed(1)} s from ours`;
  return html`<p class="small ${off ? 'warn' : 'muted'}" data-partner-clock>Partner clock: ${text} <span class="muted">(as this API process reads the Date headers of its last ${clock.answers} answers; requests are signed with it; each worker's in cardpull_partner_clock_offset_seconds)</span></p>`;
}

function partner(p: PartnerPanelModel): Html {
  const b = p.balance;
  return html`<section class="card" aria-label="Partner">
  <h2>Partner <span class="badge">${p.env}</span> <span class="mono muted">${p.host}</span></h2>
  ${p.circuit.state === 'open'
    ? html`<div class="alert" role="alert"><b>Partner calls paused:</b> the partner refuses our credentials (${p.circuit.lastErrorCode ?? 'unknown'}: ${p.circuit.lastErrorMessage ?? ''}) since ${time(p.circuit.openedAt)}. No order is failed; they resume when the probe succeeds.</div>`
    : ''}
  <dl class="facts">
    <dt>Balance</dt>
    <dd>${'error' in b
      ? html`<span class="alert">unavailable: ${b.error}</span>`
      : html`<b data-balance="${b.amount}">${units(b.amount)}</b> <span class="muted small">fetched ${time(b.fetchedAt)}${b.stale ? ' (stale copy: the partner did not answer)' : ''}</span>
        ${b.low ? html`<div class="warn" role="alert">Low balance: below the threshold of ${units(p.lowBalanceThreshold)} (LOW_BALANCE_THRESHOLD). Orders will wait in awaiting_funds when it runs out.</div>` : ''}`}</dd>
    <dt>Circuit</dt>
    <dd>${badge(p.circuit.state)} <span class="muted small">${p.circuit.lastErrorCode ? html`last error ${p.circuit.lastErrorCode}: ${p.circuit.lastErrorMessage ?? ''}` : 'no credential error recorded'}${p.circuit.lastProbeAt ? html` · last probe ${time(p.circuit.lastProbeAt)}` : ''}</span></dd>
  </dl>
  <h3>Inventory <span class="muted small">(catalog ${p.catalogRefreshedAt ? html`refreshed ${time(p.catalogRefreshedAt)}` : 'not loaded yet'})</span></h3>
  <table>
    <thead><tr><th>Gift card</th><th>Available</th><th>Stock per face value</th></tr></thead>
    <tbody>${p.inventories.map(
      (i) => html`<tr><td title="${i.name}">${i.code}</td>${'error' in i
        ? html`<td colspan="2" class="muted small">unavailable: ${i.error}</td>`
        : html`<td title="${i.available}">${/^\d+$/.test(i.available) ? money(Number(i.available)) : i.available}${i.stale ? html` <span class="muted small">(stale)</span>` : ''}</td>
          <td class="small">${i.stocks.length ? i.stocks.map((s) => html`<span class="nowrap">${money(s.facialValue)}: ${s.quantity}</span> `) : html`<span class="muted">-</span>`}</td>`}</tr>`,
    )}</tbody>
  </table>
  ${traffic(p)}
  <div id="partner-errors">
  <h3>Partner errors by kind <span class="muted small">(${p.errors.errors} kept, of ${p.errors.kinds} kind${p.errors.kinds === 1 ? '' : 's'}${p.errors.kinds > p.errors.groups.length ? `; the latest ${p.errors.groups.length} kinds` : ''})</span></h3>
  ${p.errors.groups.length === 0
    ? html`<p class="muted">None recorded.</p>`
    : html`${partnerErrorTable(p.errors.groups, PANEL_MESSAGE_MAX)}
  <p class="small"><a href="/admin/errors#partner-errors" data-all-partner-errors>${p.errors.kinds > p.errors.groups.length ? `All ${p.errors.kinds} kinds` : 'By kind'}, and the latest errors one by one</a></p>`}
  </div>
</section>`;
}

/**
 * Money (issue 24): the ledger's accounts for this partner account, the balance drift check's latest sample
 * (a warning, with the orders of the drift's window, while the partner's balance is not what the ledger
 * explains), the units assumed for the spec's silent money points, and the operator's movement: a top-up the
 * partner confirmed, or a correction, with a reason.
 */
function moneyPanel(model: OperationsModel, session: AdminSession): Html {
  const m = model.money;
  const d = m.drift;
  return html`<section class="card" id="money" aria-label="Money">
  <h2>Money <span class="muted">(ledger of ${m.book.partnerAccount}, ${m.book.currency})</span></h2>
  ${d?.state === 'drift'
    ? html`<div class="warn" id="balance-drift" data-drift="${d.drift}"><b>Balance drift:</b> the partner's balance is ${money(d.partnerBalance)} where the ledger explains ${money(d.ledgerBalance)}${d.inFlight ? ` (less up to ${money(d.inFlight)} in flight)` : ''}: <b>${money(d.drift)}</b> unexplained, since ${time(d.windowFrom!)}. ${d.drift < 0 ? 'Drawn without a card we know of: ask the partner; record an adjustment once explained.' : 'Credited without a top-up we know of: record the top-up.'}
      ${m.driftOrders.length ? html`<div class="small">Orders that moved money in the window: ${m.driftOrders.map((o) => html`<span class="nowrap" data-drift-order="${o.orderId}">${orderLink(o.orderId)} <span class="muted">${o.kinds.join(', ')}</span></span> `)}</div>` : ''}</div>`
    : html`<p class="small muted" id="balance-drift-state">${d ? html`Balance drift check: ${d.state === 'opening' ? 'the ledger was opened at the partner\'s balance' : 'the partner\'s balance agrees with the ledger'} (${time(d.at)}; tolerance ${money(d.tolerance)}).` : 'Balance drift check: no sample yet.'}</p>`}
  ${d ? html`<p class="small" id="runway" data-runway-state="${d.runwayState}">Runway: <b>${d.runwayHours === null ? 'endless (nothing spent lately)' : `${d.runwayHours.toFixed(1)} hours`}</b> at ${money(Math.round(d.spendPerMinute))} a minute${d.runwayState === 'ok' ? '' : html` <span class="${d.runwayState === 'below' ? 'danger' : 'warn'}">${d.runwayState}: top up the float</span>`}</p>` : ''}
  <table><thead><tr><th>Account</th><th class="num">Balance</th></tr></thead><tbody>
  ${m.balances.length ? m.balances.map((b) => html`<tr data-account="${b.account}"><td>${b.account}</td><td class="num">${money(b.balance)}</td></tr>`) : html`<tr><td colspan="2" class="muted">No movement yet.</td></tr>`}
  </tbody></table>
  <p class="small">Daily statements (every client, CSV): <a href="/admin/statements" data-statement="today" download>today</a> · <a href="/admin/statements?date=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}" data-statement="yesterday" download>yesterday</a> <span class="muted">(UTC; a client's own: GET /v1/statements?date=, scope statements:read)</span></p>
  <p class="small muted" id="money-units">Units assumed (the partner's spec does not show them): discount ${m.units.discount}; balance ${m.units.balance}. A value that contradicts them is refused, never computed with.</p>
  ${session.canAct
    ? html`<form class="action" method="post" action="/admin/ledger/movements" id="ledger-movement">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <select name="kind" aria-label="Kind"><option value="top_up">Top-up</option><option value="adjustment">Adjustment</option></select>
  <input type="text" name="amount" inputmode="decimal" pattern="-?[0-9]+([.][0-9]{1,2})?" placeholder="Amount (${m.book.currency}, e.g. 500.00)" aria-label="Amount" required>
  <input type="text" name="reason" maxlength="500" placeholder="Reason (the partner's confirmation, a ticket)" aria-label="Reason" required>
  <button type="submit" title="Record it in the ledger: adjustments to float (a negative adjustment: float to adjustments)">Record</button>
</form>`
    : ''}
</section>`;
}

function spend(model: OperationsModel): Html {
  if (!model.spend.length) return html``;
  const limit = (n: number | null) => (n === null ? html`<span class="muted">none</span>` : html`${n}`);
  return html`<section class="card" id="spend" aria-label="Spend today">
  <h2>Spend today <span class="muted">(UTC, SPEND_LIMITS; reserved at cost in the ledger)</span></h2>
  <table><thead><tr><th>Client</th><th>Reserved today</th><th>Daily limit</th><th>Remaining</th><th>Largest order</th></tr></thead><tbody>
  ${model.spend.map((s) => html`<tr><td>${s.client}</td><td>${s.today}</td><td>${limit(s.perDay)}</td><td>${s.perDay === null ? '' : Math.max(0, s.perDay - s.today)}</td><td>${limit(s.maxOrder)}</td></tr>`)}
  </tbody></table>
</section>`;
}

/** /admin: where an operator starts: what is stuck, what the partner says, where to look next. */
export function operationsView(model: OperationsModel, ctx: PageContext & { session: AdminSession }): Html {
  return page(
    'Operations',
    ctx,
    html`${model.plainPasswords ? html`<div class="warn small">ADMIN_USERS holds a plain-text password: fine for a local run; store hashes (npm run admin:hash-password) anywhere else.</div>` : ''}
<div class="grid">
  <div>
    ${counts(model)}
    ${inDoubt(model)}
    ${attention(model, ctx.session)}
    ${failures(model)}
    ${extraCards(model, ctx.session)}
    <section class="card" aria-label="Recent orders"><h2>Recent orders</h2>${model.recent.length ? ordersTable(model.recent) : html`<p class="muted">No orders yet.</p>`}</section>
  </div>
  <div>${partner(model.partner)}
    ${partnerProfileSection(model.partner.profile)}
    ${catalogChangesCard(model.catalogChanges)}
    ${moneyPanel(model, ctx.session)}
    ${spend(model)}
    <section class="card"><h2>Jobs</h2><p>Queues <b>orders</b> and <b>callbacks</b>: <a href="/admin/queues">open the job dashboard</a>. Redis holds only triggers; every order is in Postgres.</p></section>
  </div>
</div>`,
  );
}

export function searchView(query: string, hits: SearchHit[], ctx: PageContext): Html {
  return page(
    'Search',
    { ...ctx, query },
    html`<section class="card"><h2>Orders matching <span class="mono">${query}</span></h2>
  ${hits.length
    ? ordersTable(hits, true)
    : html`<p class="muted">No order has this id, Idempotency-Key, partner request ID, partner card id or gift card code.</p>`}
</section>`,
  );
}

/** /admin/errors: every cause of failure and kind of partner error (the overview shows the latest few), and the latest partner errors. */
export function errorsView(model: ErrorsModel, ctx: PageContext): Html {
  const p = model.partnerErrors;
  return page(
    'Errors',
    ctx,
    html`<section class="card" id="failures" aria-label="Failures by cause"><h2>Failures by cause <span class="muted">(failed and needs attention: ${model.failureCauses} cause${model.failureCauses === 1 ? '' : 's'}, latest first)</span></h2>
  ${model.failures.length ? failureTable(model.failures) : html`<p class="muted">No failed order, none waiting for attention.</p>`}
</section>
<section class="card" id="partner-errors" aria-label="Partner errors by kind"><h2>Partner errors by kind <span class="muted">(${p.errors} kept, of ${p.kinds} kind${p.kinds === 1 ? '' : 's'}, latest first)</span></h2>
  ${p.groups.length ? partnerErrorTable(p.groups, 500) : html`<p class="muted">None recorded.</p>`}
</section>
<section class="card" id="latest-partner-errors" aria-label="Latest partner errors"><h2>Latest partner errors <span class="muted">(the newest ${model.latest.length})</span></h2>
  ${model.latest.length
    ? html`<table class="small">
    <thead><tr><th>When</th><th>Call</th><th>Outcome</th><th>Message</th></tr></thead>
    <tbody>${model.latest.map(
      (e) => html`<tr><td class="nowrap">${time(e.at)}</td><td>${e.endpoint}</td><td>${e.code ?? e.outcome}${e.httpStatus ? ` (${e.httpStatus})` : ''}</td>
      <td>${e.message}${e.requestId ? html`<div class="mono muted">${e.requestId}</div>` : ''}</td></tr>`,
    )}</tbody>
  </table>`
    : html`<p class="muted">None recorded.</p>`}
</section>`,
  );
}
