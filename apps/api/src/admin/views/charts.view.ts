import { CHART_RANGES, type ChartBucket, type ChartRange, type MoneyBucket, type OpenAges } from '@cardpull/orders';
import { type Html, html } from './html';
import { page, type PageContext } from './layout';

/**
 * The charts of the operations page, drawn here as SVG: no script, no remote asset (the page's CSP allows
 * neither), only presentation attributes (no style attribute), so they read at a glance on a laptop.
 */

const W = 640;
const H = 150;
const PAD = { left: 44, right: 8, top: 8, bottom: 20 };
const COLORS = { completed: '#1a7f37', failed: '#cf222e', needsAttention: '#bf8700', p50: '#0969da', p95: '#8250df', p99: '#cf222e', unknown: '#bf8700', refusals: '#cf222e' };

const fmtTime = (d: Date, range: ChartRange) =>
  range === 'week' ? d.toISOString().slice(5, 13).replace('T', ' ') + 'h' : d.toISOString().slice(11, 16);
const fmtNum = (n: number, unit: string) => (unit === 's' ? (n >= 100 ? `${Math.round(n)} s` : n >= 1 ? `${n.toFixed(1)} s` : `${Math.round(n * 1000)} ms`) : String(Math.round(n)));

interface Series {
  name: string;
  color: string;
  values: (number | null)[];
}

function frame(labels: Date[], range: ChartRange, max: number, unit: string, body: Html): Html {
  const x = (i: number) => PAD.left + ((W - PAD.left - PAD.right) * i) / Math.max(1, labels.length - 1);
  const ticks = [0, Math.floor((labels.length - 1) / 2), labels.length - 1];
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" width="100%" role="img">
  <line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#d0d7de"/>
  <line x1="${PAD.left}" y1="${PAD.top}" x2="${W - PAD.right}" y2="${PAD.top}" stroke="#eef0f2"/>
  <text x="${PAD.left - 4}" y="${PAD.top + 8}" text-anchor="end" font-size="10" fill="#6e7781">${fmtNum(max, unit)}</text>
  <text x="${PAD.left - 4}" y="${H - PAD.bottom}" text-anchor="end" font-size="10" fill="#6e7781">0</text>
  ${ticks.map((i, k) => html`<text x="${x(i)}" y="${H - 6}" text-anchor="${k === 0 ? 'start' : k === ticks.length - 1 ? 'end' : 'middle'}" font-size="10" fill="#6e7781">${labels[i] ? fmtTime(labels[i]!, range) : ''}</text>`)}
  ${body}
</svg>`;
}

const legend = (series: readonly { name: string; color: string }[]) =>
  html`<div class="legend small">${series.map((s) => html`<span><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${s.color}"/></svg> ${s.name}</span> `)}</div>`;

/** Lines over time (gaps where a bucket has no value). */
export function lineChart(labels: Date[], range: ChartRange, series: Series[], unit: string): Html {
  const max = Math.max(1e-9, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null))) * 1.1;
  const x = (i: number) => PAD.left + ((W - PAD.left - PAD.right) * i) / Math.max(1, labels.length - 1);
  const y = (v: number) => H - PAD.bottom - ((H - PAD.top - PAD.bottom) * v) / max;
  const paths = series.map((s) => {
    let d = '';
    let pen = false;
    s.values.forEach((v, i) => {
      if (v === null) return void (pen = false);
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)} ${y(v).toFixed(1)} `;
      pen = true;
    });
    const points = s.values.map((v, i) => (v === null ? null : html`<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="1.6" fill="${s.color}"/>`));
    return html`<g data-series="${s.name}"><path d="${d.trim()}" fill="none" stroke="${s.color}" stroke-width="1.6"/>${points}</g>`;
  });
  return html`${frame(labels, range, max, unit, html`${paths}`)}${legend(series)}`;
}

/** Stacked bars over time. */
export function stackedBars(labels: Date[], range: ChartRange, series: Series[]): Html {
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals) * 1.1;
  const slot = (W - PAD.left - PAD.right) / labels.length;
  const bars = labels.map((_, i) => {
    let base = H - PAD.bottom;
    return series.map((s) => {
      const v = s.values[i] ?? 0;
      if (!v) return '';
      const h = ((H - PAD.top - PAD.bottom) * v) / max;
      base -= h;
      return html`<rect data-series="${s.name}" x="${(PAD.left + i * slot + 0.5).toFixed(1)}" y="${base.toFixed(1)}" width="${Math.max(1, slot - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${s.color}"><title>${fmtTime(labels[i]!, range)}: ${v} ${s.name}</title></rect>`;
    });
  });
  // The frame's x ticks sit on the bars' left edges: close enough at this size.
  return html`${frame(labels, range, max, '', html`${bars}`)}${legend(series)}`;
}

/** Open orders by status, split by age. */
function openAgesChart(rows: OpenAges[]): Html {
  if (!rows.length) return html`<p class="muted">No open order.</p>`;
  const parts = [
    { key: 'under1m', name: 'under 1 min', color: '#8c959f' },
    { key: 'under10m', name: '1-10 min', color: '#0969da' },
    { key: 'under1h', name: '10-60 min', color: '#bf8700' },
    { key: 'older', name: 'over 1 h', color: '#cf222e' },
  ] as const;
  const max = Math.max(1, ...rows.map((r) => parts.reduce((s, p) => s + r[p.key], 0)));
  const rowH = 18;
  const width = W - 130;
  return html`<svg class="chart" viewBox="0 0 ${W} ${rows.length * rowH + 6}" width="100%" role="img">${rows.map((r, i) => {
    let x = 120;
    return html`<g data-status="${r.status}"><text x="114" y="${i * rowH + 13}" text-anchor="end" font-size="11" fill="#24292f">${r.status.replace(/_/g, ' ')}</text>${parts.map((p) => {
      const w = (width * r[p.key]) / max;
      const out = r[p.key] ? html`<rect x="${x.toFixed(1)}" y="${i * rowH + 3}" width="${Math.max(1, w).toFixed(1)}" height="${rowH - 6}" fill="${p.color}"><title>${r[p.key]} ${p.name}</title></rect>` : '';
      x += w;
      return out;
    })}<text x="${(x + 4).toFixed(1)}" y="${i * rowH + 13}" font-size="10" fill="#6e7781">${parts.reduce((s, p) => s + r[p.key], 0)}</text></g>`;
  })}</svg>${legend(parts)}`;
}

/** /admin/charts: orders, time to card, the partner's answers and the open orders, over an hour, a day or a week. */
export function chartsView(range: ChartRange, buckets: ChartBucket[], open: OpenAges[], ctx: PageContext, money: MoneyBucket[] = []): Html {
  const labels = buckets.map((b) => b.at);
  const col = (k: keyof ChartBucket) => buckets.map((b) => b[k] as number | null);
  return page(
    'Charts',
    ctx,
    html`<h1>Charts <span class="muted small">${CHART_RANGES[range].label}</span>
  <span class="small">${(Object.keys(CHART_RANGES) as ChartRange[]).map((r) => (r === range ? html`<b>${r}</b> ` : html`<a href="/admin/charts?range=${r}">${r}</a> `))}</span></h1>
<div class="grid2">
  <section class="card" id="chart-orders" aria-label="Orders by final status"><h2>Orders ended, by final status</h2>
    ${stackedBars(labels, range, [
      { name: 'completed', color: COLORS.completed, values: col('completed') },
      { name: 'failed', color: COLORS.failed, values: col('failed') },
      { name: 'needs attention', color: COLORS.needsAttention, values: col('needsAttention') },
    ])}</section>
  <section class="card" id="chart-time-to-card" aria-label="Time from intake to card"><h2>Time from intake to card</h2>
    ${lineChart(labels, range, [
      { name: 'p50', color: COLORS.p50, values: col('p50') },
      { name: 'p95', color: COLORS.p95, values: col('p95') },
      { name: 'p99', color: COLORS.p99, values: col('p99') },
    ], 's')}</section>
  <section class="card" id="chart-partner" aria-label="Partner answers"><h2>Partner: sync call latency (p50, p95) and troubled answers</h2>
    ${lineChart(labels, range, [
      { name: 'sync call p50', color: COLORS.p50, values: col('syncCallP50') },
      { name: 'sync call p95', color: COLORS.p95, values: col('syncCallP95') },
    ], 's')}
    ${stackedBars(labels, range, [
      { name: 'unknown outcomes', color: COLORS.unknown, values: col('unknownOutcomes') },
      { name: 'refusals (failed, no funds, no stock)', color: COLORS.refusals, values: col('partnerRefusals') },
    ])}</section>
  <section class="card" id="chart-open" aria-label="Open orders by status and age"><h2>Open orders by status and age (now)</h2>${openAgesChart(open)}</section>
</div>
<div class="grid2">
  <section class="card" id="chart-money" aria-label="Money"><h2>Money: what cards cost, in currency units</h2>
    ${stackedBars(money.map((m) => m.at), range, [
      { name: 'spent (cards stored)', color: COLORS.completed, values: money.map((m) => m.spent) },
      { name: 'surplus (cards kept beyond their order)', color: COLORS.needsAttention, values: money.map((m) => m.surplus) },
    ])}
    <p class="small muted">Face value of the cards stored in the window: ${money.reduce((n, m) => n + m.faceValue, 0).toFixed(2)}; their cost: ${money.reduce((n, m) => n + m.spent, 0).toFixed(2)}.</p></section>
</div>
<p class="small muted">From Postgres at each load. Latency of every kind of call (polls, reads) and more: the Grafana dashboard (ops/grafana/cardpull.json) over /metrics.</p>`,
  );
}
