import { createHash } from 'node:crypto';
import type { AdminSession, Flash } from '../auth/admin-sessions.service';
import { type Html, html, trusted } from './html';

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f3f4f6}
a{color:#0550ae}
header{display:flex;align-items:center;gap:18px;padding:7px 16px;background:#1f2937;color:#e5e7eb}
header a{color:#fff;text-decoration:none}
header .brand{font-weight:700;letter-spacing:.2px}
header nav{display:flex;gap:14px}
header form.search{flex:1;display:flex;gap:6px;max-width:520px}
header input[type=search]{flex:1;padding:4px 8px;border-radius:4px;border:0;font:inherit}
header .who{margin-left:auto;display:flex;gap:8px;align-items:center;color:#cbd5e1}
main{padding:12px 16px;max-width:1600px;margin:0 auto}
.grid{display:grid;grid-template-columns:minmax(0,7fr) minmax(0,5fr);gap:12px;align-items:start}
section.card{background:#fff;border:1px solid #d8dee4;border-radius:6px;padding:10px 12px;margin-bottom:12px}
h1{font-size:17px;margin:2px 0 10px;display:flex;gap:10px;align-items:center}
h2{font-size:14px;margin:0 0 8px}
h3{font-size:13px;margin:8px 0 4px}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eef0f2;vertical-align:top}
th{font-weight:600;color:#57606a;font-size:12px;white-space:nowrap}
td.num,th.num{text-align:right}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;word-break:break-all}
.copy{user-select:all;cursor:text;background:#f6f8fa;padding:0 4px;border-radius:3px}
.muted{color:#6e7781}
.small{font-size:12px}
.nowrap{white-space:nowrap}
.badge{display:inline-block;padding:1px 7px;border-radius:10px;font-size:11px;font-weight:600;background:#eaeef2;color:#24292f;white-space:nowrap}
.s-completed,.s-closed,.s-delivered{background:#dafbe1;color:#116329}
.s-failed,.s-open{background:#ffebe9;color:#a40e26}
.s-needs_attention,.s-surplus,.s-mismatch{background:#fff1c2;color:#7d4e00}
.s-pending,.s-in_progress{background:#ddf4ff;color:#0550ae}
.s-awaiting_funds,.s-awaiting_stock{background:#fbefff;color:#6e40c9}
.grid2{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:12px;align-items:start}
svg.chart{display:block;max-height:190px}
.legend{display:flex;gap:12px;flex-wrap:wrap;color:#57606a}
.counts{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:6px}
.counts div{border:1px solid #d8dee4;border-radius:6px;padding:4px 8px}
.counts b{display:block;font-size:18px}
.flash{padding:8px 12px;border-radius:6px;margin-bottom:12px;border:1px solid}
.flash.ok{background:#dafbe1;border-color:#4ac26b}
.flash.error,.alert{background:#ffebe9;border:1px solid #ff8182;padding:6px 10px;border-radius:6px}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:6px}
button{font:inherit;padding:2px 10px;border-radius:4px;border:1px solid #d0d7de;background:#f6f8fa;cursor:pointer}
button.primary{background:#1f883d;color:#fff;border-color:#1a7f37}
button.danger{background:#cf222e;color:#fff;border-color:#a40e26}
header button{background:transparent;color:#cbd5e1;border-color:#4b5563}
form.action{display:flex;gap:6px;align-items:center;margin:0}
form.action input[type=text]{flex:1;min-width:110px;padding:2px 6px;font:inherit}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 12px;margin:0}
dt{color:#57606a}
dd{margin:0}
.login{max-width:340px;margin:12vh auto;background:#fff;border:1px solid #d8dee4;border-radius:8px;padding:20px}
.login label{display:block;margin:10px 0 3px;color:#57606a}
.login input{width:100%;padding:6px 8px;font:inherit}
.login button{margin-top:14px;width:100%;padding:6px}
`;

/** Pages have no script at all; the only inline style is this sheet, allowed by its hash. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export interface PageContext {
  session: AdminSession | null;
  flash?: Flash | null;
  /** The search box's current text. */
  query?: string;
  /** Reload the page every this many seconds (a bulk action's progress while it runs). */
  refreshS?: number;
}

/** A whole page: the top bar (search, job dashboard link, user, log out), the flash message and `body`. */
export function page(title: string, ctx: PageContext, body: Html): Html {
  const { session, flash } = ctx;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · cardpull</title><style>${trusted(STYLE)}</style>${ctx.refreshS ? html`<meta http-equiv="refresh" content="${ctx.refreshS}">` : ''}</head>
<body>
${session
  ? html`<header>
  <a class="brand" href="/admin">cardpull operations</a>
  <nav><a href="/admin">Overview</a><a href="/admin/orders">Orders</a><a href="/admin/charts">Charts</a><a href="/admin/errors">Errors</a><a href="/admin/queues">Job dashboard</a></nav>
  <form class="search" method="get" action="/admin/search" role="search">
    <input type="search" name="q" value="${ctx.query ?? ''}" placeholder="Order id, Idempotency-Key, partner request ID or gift card code" aria-label="Search orders" required>
    <button type="submit">Search</button>
  </form>
  <div class="who"><span>${session.user} (${session.canAct ? session.role : 'read-only'})</span>
    <form method="post" action="/admin/logout"><input type="hidden" name="csrf" value="${session.csrfToken}"><button type="submit">Log out</button></form>
  </div>
</header>`
  : ''}
<main>
${flash ? html`<div class="flash ${flash.kind}" role="status">${flash.message}</div>` : ''}
${body}
</main>
</body></html>`;
}
