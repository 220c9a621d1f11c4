import { sleep, waitFor } from '@cardpull/testing';
import { useStack } from '../support/stack';
import { scrape, valueOf, workerUrl } from './support';

const INTERVAL_MS = 1_000; // BALANCE_WATCH_INTERVAL_MS's smallest value

describe('low balance watch (worker): one warning per crossing of LOW_BALANCE_THRESHOLD, an info on recovery, and the gauge follows', () => {
  const stack = useStack({ env: { BALANCE_WATCH_INTERVAL_MS: String(INTERVAL_MS), PARTNER_CACHE_TTL_MS: '200', LOW_BALANCE_THRESHOLD: '100' } });

  const watchLines = (alert: string) =>
    stack.logs.json().filter((l) => l.alert === alert && (l.context === 'BalanceWatch' || String(l.msg ?? '').includes('LOW_BALANCE_THRESHOLD')));

  it('setBalance(1): the low gauge flips to 1 on the worker and the API, one warning only; back to 5000: gauge 0, one info', async () => {
    const worker = workerUrl(stack);
    await waitFor('a first balance', async () => valueOf((await scrape(worker)).samples, 'cardpull_partner_balance_low') === 0);
    expect(watchLines('partner_balance_low')).toHaveLength(0);

    await stack.sim.control.setBalance(1);
    await waitFor('the low-balance warning', () => watchLines('partner_balance_low').length > 0, 10_000);
    const [warning] = watchLines('partner_balance_low');
    expect(warning).toEqual(expect.objectContaining({ level: 'warn', balance: 1, threshold: 100 }));
    for (const base of [worker, stack.apiUrl]) {
      await waitFor(`the low gauge on ${base}`, async () => {
        const samples = (await scrape(base)).samples;
        return valueOf(samples, 'cardpull_partner_balance_low') === 1 && valueOf(samples, 'cardpull_partner_balance') === 1;
      });
    }
    // Still low over several more checks: no second warning.
    await sleep(INTERVAL_MS * 2.5);
    expect(watchLines('partner_balance_low')).toHaveLength(1);

    await stack.sim.control.setBalance(5000);
    await waitFor('the recovery info', () => watchLines('partner_balance_recovered').length > 0, 10_000);
    expect(watchLines('partner_balance_recovered')[0]).toEqual(expect.objectContaining({ level: 'info', balance: 5000 }));
    await waitFor('the low gauge back to 0', async () => valueOf((await scrape(worker)).samples, 'cardpull_partner_balance_low') === 0);
    await sleep(INTERVAL_MS * 1.5);
    expect(watchLines('partner_balance_low')).toHaveLength(1);
    expect(watchLines('partner_balance_recovered')).toHaveLength(1);
  });
});
