import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOrder, useStack, waitForOrder } from '../support/stack';
import { scrape, valueOf, workerUrl } from './support';

const ROOT = join(__dirname, '..', '..');
const RULES = join(ROOT, 'ops', 'prometheus', 'cardpull.rules.yml');
const RULE_TESTS = join(ROOT, 'ops', 'prometheus', 'cardpull.rules.test.yml');
/** Debian's prometheus package (`.ci/run` installs it when missing). */
const PROMTOOL = process.env.PROMTOOL_BIN ?? '/usr/bin/promtool';

const promtool = (...args: string[]) => {
  if (!existsSync(PROMTOOL)) throw new Error(`${PROMTOOL} is missing: install Debian's prometheus package (\`apt-get install prometheus\`; .ci/run does it when missing), or set PROMTOOL_BIN`);
  const r = spawnSync(PROMTOOL, args, { encoding: 'utf8', cwd: ROOT, timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
};

/**
 * Issue 14, item 5: the alert rules that ship (ops/prometheus/cardpull.rules.yml) are valid Prometheus
 * rules, each alert fires on the series that should raise it and stays quiet on healthy ones (promtool's
 * own unit tests, ops/prometheus/cardpull.rules.test.yml), and every metric they read is one the service
 * exposes, so no rule waits for a series that never comes.
 */
describe('Prometheus alert rules: valid, unit-tested with promtool, reading only metrics the service exposes', () => {
  const stack = useStack();

  it('promtool check rules accepts them', () => {
    const r = promtool('check', 'rules', RULES);
    expect({ status: r.status, ok: /SUCCESS: \d+ rules found/.test(r.out) }).toEqual({ status: 0, ok: true });
  });

  it('promtool test rules: every alert fires when it should and not otherwise', () => {
    const r = promtool('test', 'rules', RULE_TESTS);
    expect({ status: r.status, out: r.out.trim() }).toEqual({ status: 0, out: expect.stringContaining('SUCCESS') });
  });

  it('every cardpull_ metric in the rules is exposed (worker or API), the new time-to-card histogram with a completed order in it', async () => {
    const order = await createOrder(stack, { gift_card_code: 'FAST-FREE', amount: 1000 });
    await waitForOrder(stack, order.id, (o) => o.status === 'completed');
    const worker = (await scrape(workerUrl(stack))).samples;
    const api = (await scrape(stack.apiUrl)).samples;
    const exposed = new Set([...worker.keys(), ...api.keys()]);
    const used = [...new Set(readFileSync(RULES, 'utf8').match(/\bcardpull_[a-z_]+/g) ?? [])];
    expect(used.length).toBeGreaterThan(8);
    // A histogram is exposed as its _bucket, _count and _sum series.
    expect(used.filter((name) => !exposed.has(name) && !exposed.has(`${name}_count`))).toEqual([]);
    // The Grafana dashboard reads the same names, and the rules' recorded series.
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops', 'grafana', 'cardpull.json'), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
    const recorded = new Set(readFileSync(RULES, 'utf8').match(/record: (\S+)/g)?.map((r) => r.slice('record: '.length)));
    const inDashboard = [...new Set(exprs.match(/\bcardpull[_:][a-z0-9_:]+/g) ?? [])];
    expect(inDashboard.filter((name) => !recorded.has(name) && !exposed.has(name) && !exposed.has(name.replace(/_bucket$|_count$/, '_count')))).toEqual([]);
    expect(valueOf(worker, 'cardpull_order_time_to_card_seconds_count', { mode: 'sync' })).toBe(1);
    expect(valueOf(worker, 'cardpull_order_time_to_card_seconds_bucket', { mode: 'sync', le: '60' })).toBe(1);
  });
});
