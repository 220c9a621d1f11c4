import { Registry } from 'prom-client';
import { PartnerCallListeners, type PartnerCallEvent } from '@cardpull/partner-client';
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
