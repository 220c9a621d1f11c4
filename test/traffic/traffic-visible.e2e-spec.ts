import { RedisCallGate } from '@cardpull/traffic';
import { ADMIN_ENV, ALICE, adminCall, login } from '../admin/support/admin';
import { scrape, valueOf, workerUrl } from '../observability/support';
import { useStack } from '../support/stack';

/**
 * Issue 12, item 6: the fleet's partner limits are visible: the operations page shows each scope's limit,
 * rate, calls in flight, a Retry-After pause and 429s of the last hour, and each kind's timeout; /metrics
 * exports the same; the pause is logged where it starts.
 */
describe('partner traffic on the operations page and in /metrics', () => {
  const stack = useStack({
    env: {
      ...ADMIN_ENV,
      PARTNER_LIMITS: JSON.stringify({ create: { per_second: 7, in_flight: 3 }, any: { per_second: 40 } }),
      PARTNER_TIMEOUT_SYNC_MS: '4000',
      PARTNER_TIMEOUT_POLL_MS: '1500',
    },
  });

  it('a 429 with Retry-After: the page warns of the pause and counts the 429; metrics show limit, pause and count; the log says so', async () => {
    const gate = stack.worker!.get(RedisCallGate);
    const permit = await gate.acquire('create', { maxWaitMs: 0 });
    if ('heldBack' in permit) throw new Error('no permit');
    permit.done({ sent: true, httpStatus: 429, retryAfterMs: 30_000 });
    await new Promise((r) => setTimeout(r, 100));

    const cookie = await login(stack, ALICE);
    const page = (await adminCall(stack, 'GET', '/admin', { cookie, html: true })).text;
    expect(page).toContain('Traffic');
    expect(page).toMatch(/data-paused="create"[^>]*><b>Paused by the partner:<\/b> no create call from any worker until/);
    const row = (scope: string) => new RegExp(`<tr data-scope="${scope}">(.*?)</tr>`, 's').exec(page)?.[1] ?? '';
    expect(row('create')).toMatch(/7\/s, 3 in flight/);
    expect(row('create')).toMatch(/<td>1<\/td><\/tr>$|<td>1<\/td>\s*$/);
    expect(row('poll')).toMatch(/unlimited/);
    expect(page).toContain('Timeouts: 4000 ms sync pull, 1000 ms async creation, 1500 ms poll, 1000 ms read');
    expect(row('any')).toMatch(/40\/s/);

    const samples = (await scrape(workerUrl(stack))).samples;
    expect(valueOf(samples, 'cardpull_partner_limit_per_second', { scope: 'create' })).toBe(7);
    expect(valueOf(samples, 'cardpull_partner_limit_in_flight', { scope: 'create' })).toBe(3);
    expect(valueOf(samples, 'cardpull_partner_limit_per_second', { scope: 'poll' })).toBeUndefined();
    expect(valueOf(samples, 'cardpull_partner_paused', { scope: 'create' })).toBe(1);
    expect(valueOf(samples, 'cardpull_partner_paused', { scope: 'poll' })).toBe(0);
    expect(valueOf(samples, 'cardpull_partner_paused_until_seconds', { scope: 'create' })).toBeGreaterThan(Date.now() / 1000 + 20);
    expect(valueOf(samples, 'cardpull_partner_rate_limited_last_hour', { scope: 'create' })).toBe(1);

    // A creation asked for now is held back (paused), and the count of this process says so.
    const held = await gate.acquire('create', { maxWaitMs: 0 });
    expect('heldBack' in held && held.reason).toBe('paused');
    const after = (await scrape(workerUrl(stack))).samples;
    expect(valueOf(after, 'cardpull_partner_held_back_total', { kind: 'create', reason: 'paused' })).toBeGreaterThanOrEqual(1);
    expect(stack.logs.json().some((l) => typeof l.msg === 'string' && l.msg.startsWith('partner asked for a pause: no create call from any worker until'))).toBe(true);
  });
});
