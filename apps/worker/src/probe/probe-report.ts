import type { PartnerProfile } from '@cardpull/partner-client';
import { verdictText } from './probe';

/** The probe's findings as a reader wants them: one line per point (verdict, then what was seen), then latency and spend. */
export function probeReport(profile: PartnerProfile): string {
  const width = Math.max(...profile.findings.map((f) => f.title.length), 10);
  const lines = [
    `Partner profile of ${profile.partner.base_url} (${profile.partner.env}), probed ${profile.probed_at}: ${profile.calls ?? '?'} calls, ${
      profile.spent?.cards ? `1 card of ${profile.spent.face_value} bought (order ${profile.spent.order_id}, request ID ${profile.spent.request_id}; the worker stores it)` : 'nothing bought'
    }`,
    '',
    ...profile.findings.map((f) => `${f.title.padEnd(width)}  ${verdictText(f)}\n${' '.repeat(width + 2)}${f.finding}`),
    '',
    'Latency per endpoint (ms):',
    ...Object.entries(profile.latency ?? {}).map(([endpoint, l]) => `  ${endpoint.padEnd(24)} p50 ${l.p50_ms}  p95 ${l.p95_ms}  (${l.calls} calls)`),
  ];
  const differs = profile.findings.filter((f) => f.verdict === 'differs');
  lines.push('', differs.length ? `${differs.length} point(s) differ from our reading: ${differs.map((f) => verdictText(f)).join('; ')}` : 'Every point the probe could tell is as we assume.');
  return `${lines.join('\n')}\n`;
}
