import { Registry } from 'prom-client';
import { PartnerCallListeners, type PartnerCallEvent, type PartnerClient } from '@cardpull/partner-client';
import { PartnerCallMetrics } from './partner-call.metrics';

describe('cardpull_pull_retries_total: every partner answer that makes the order call again', () => {
  let registry: Registry;
  let listeners: PartnerCallListeners;

  beforeEach(() => {
    registry = new Registry();
    listeners = new PartnerCallListeners();
    new PartnerCallMetrics(registry, listeners).onModuleInit();
  });

  const retries = async () =>
    Object.fromEntries(
      (await registry.getSingleMetric('cardpull_pull_retries_total')!.get()).values.map((v) => [`${v.labels.endpoint}/${v.labels.kind}`, v.value]),
    );
  const call = (event: Partial<PartnerCallEvent> & Pick<PartnerCallEvent, 'endpoint' | 'outcome'>) => listeners.emit({ durationMs: 5, ...event });

  it('same_id for an unknown outcome of a pull and for a 404 on polling; new_attempt for out_of_stock / not_enough_funds and for a pull request in status error', async () => {
    call({ endpoint: 'createCard', outcome: 'unknown', reason: 'timeout' });
    call({ endpoint: 'getPullRequest', outcome: 'not_found', code: 'pull_request_not_found' });
    call({ endpoint: 'createCard', outcome: 'definitive', code: 'out_of_stock' });
    call({ endpoint: 'createPullRequest', outcome: 'definitive', code: 'not_enough_funds' });
    call({ endpoint: 'getPullRequest', outcome: 'success', pullStatus: 'error' });
    expect(await retries()).toMatchObject({
      'createCard/same_id': 1,
      'getPullRequest/same_id': 1,
      'createCard/new_attempt': 1,
      'createPullRequest/new_attempt': 1,
      'getPullRequest/new_attempt': 1,
    });
  });

  it('no retry for a success, a pending pull request, a definitive error that ends the order, or a credential refusal', async () => {
    call({ endpoint: 'createCard', outcome: 'success' });
    call({ endpoint: 'getPullRequest', outcome: 'success', pullStatus: 'processing' });
    call({ endpoint: 'getPullRequest', outcome: 'success', pullStatus: 'success' });
    call({ endpoint: 'createCard', outcome: 'definitive', code: 'gift_card_not_found' });
    call({ endpoint: 'createCard', outcome: 'credentials', code: 'invalid_signature' });
    expect(Object.values(await retries()).every((n) => n === 0)).toBe(true);
  });
});

describe('the partner\'s time: cardpull_partner_clock_offset_seconds and cardpull_partner_resigned_calls_total', () => {
  it('the gauge is the client\'s current estimate in seconds (0 without a client); a re-signed call is counted once, by the outcome of its second send', async () => {
    const registry = new Registry();
    const listeners = new PartnerCallListeners();
    let offsetMs = 120_500;
    // The client's clock alone is read: a stand-in for it.
    const client = { clock: { offsetMs: () => offsetMs } } as unknown as PartnerClient;
    new PartnerCallMetrics(registry, listeners, client).onModuleInit();
    const offset = async () => (await registry.getSingleMetric('cardpull_partner_clock_offset_seconds')!.get()).values[0]!.value;
    expect(await offset()).toBe(120.5);
    offsetMs = -3_000;
    expect(await offset()).toBe(-3);

    listeners.emit({ endpoint: 'createCard', outcome: 'success', resigned: true, durationMs: 5 });
    listeners.emit({ endpoint: 'getBalance', outcome: 'credentials', code: 'invalid_signature', resigned: true, durationMs: 5 });
    listeners.emit({ endpoint: 'getBalance', outcome: 'success', durationMs: 5 });
    const resigned = (await registry.getSingleMetric('cardpull_partner_resigned_calls_total')!.get()).values.map((v) => [v.labels.endpoint, v.labels.outcome, v.value]);
    expect(resigned).toEqual([['createCard', 'success', 1], ['getBalance', 'credentials', 1]]);
    const calls = (await registry.getSingleMetric('cardpull_partner_calls_total')!.get()).values.reduce((n, v) => n + v.value, 0);
    expect(calls).toBe(3);

    const bare = new Registry();
    new PartnerCallMetrics(bare, new PartnerCallListeners());
    expect((await bare.getSingleMetric('cardpull_partner_clock_offset_seconds')!.get()).values[0]!.value).toBe(0);
  });
});
