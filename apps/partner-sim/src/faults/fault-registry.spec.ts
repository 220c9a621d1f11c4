import type { FastifyRequest } from 'fastify';
import { FaultRegistry } from './fault-registry';
import { faultSpecSchema, type FaultSpecInput } from '@cardpull/sim-contract';

const req = () => ({ sim: { entry: null, requestId: null, body: { kind: 'none' } } }) as unknown as FastifyRequest;
const registryWith = (...specs: FaultSpecInput[]) => {
  const registry = new FaultRegistry();
  for (const spec of specs) registry.add(faultSpecSchema.parse(spec));
  return registry;
};
const newSyncPull = { kind: 'cards', giftCardCode: 'A', requestId: 'r', newPull: true } as const;

describe('FaultRegistry: which fault hits a request', () => {
  it('faults that change a pull leave repeats of a known request ID alone; error_before_issue does not', () => {
    const registry = registryWith({ endpoint: 'cards', mode: 'hang' }, { endpoint: 'cards', mode: 'error_before_issue' });
    expect(registry.select(req(), newSyncPull)?.mode).toBe('hang');
    expect(registry.select(req(), { ...newSyncPull, newPull: false })?.mode).toBe('error_before_issue');
  });

  it('endpoint any applies a mode only where it means something', () => {
    const registry = registryWith({ endpoint: 'any', mode: 'come_back_later' });
    expect(registry.select(req(), { kind: 'read', newPull: true })).toBeNull();
    expect(registry.select(req(), { kind: 'pull_requests', newPull: true })).toBeNull();
    expect(registry.select(req(), newSyncPull)?.mode).toBe('come_back_later');
  });

  it('filters need the request to carry the value', () => {
    const registry = registryWith({ endpoint: 'any', mode: 'latency', gift_card_codes: ['A'], request_ids: ['r'] });
    expect(registry.select(req(), { kind: 'read', newPull: true })).toBeNull();
    expect(registry.select(req(), { ...newSyncPull, requestId: 'other' })).toBeNull();
    expect(registry.select(req(), newSyncPull)).not.toBeNull();
  });

  it('times counts hits, and the hit is written on the ledger row', () => {
    const registry = registryWith({ endpoint: 'cards', mode: 'reset', times: 1 });
    const first = req();
    first.sim.entry = { at: '', finished_at: null, method: 'POST', path: '/', request_id: 'r', status: null, auth: 'ok' };
    expect(registry.select(first, newSyncPull)?.mode).toBe('reset');
    expect(first.sim.entry.fault).toBe('reset');
    expect(registry.select(req(), newSyncPull)).toBeNull();
    expect(registry.list()[0]!.hits).toBe(1);
  });

  it('readings are matched on their own, so a request can meet a reading and a delivery fault; readings reach repeats', () => {
    const registry = registryWith({ endpoint: 'cards', mode: 'business_first' }, { endpoint: 'cards', mode: 'error_before_issue' });
    const repeat = { ...newSyncPull, newPull: false };
    expect(registry.select(req(), repeat)?.mode).toBe('error_before_issue');
    expect(registry.reading(req(), repeat, 'business_first')?.mode).toBe('business_first');
    expect(registry.reading(req(), repeat, 'accepted_202')).toBeNull();
  });

  it('a reading counts a hit only for an answer it changes', () => {
    const registry = registryWith({ endpoint: 'pull_request_status', mode: 'read_lag' });
    const read = { kind: 'pull_request_status', newPull: true } as const;
    expect(registry.reading(req(), read, 'read_lag', () => false)).toBeNull();
    expect(registry.reading(req(), read, 'read_lag')).not.toBeNull();
    expect(registry.list()[0]!.hits).toBe(1);
  });

  it('a reading that would not change the answer leaves it to the next reading of its mode', () => {
    const registry = registryWith({ endpoint: 'pull_request_status', mode: 'read_lag', latency_ms: 100 }, { endpoint: 'pull_request_status', mode: 'read_lag', lag_from: 'already_used' });
    const read = { kind: 'pull_request_status', newPull: true } as const;
    expect(registry.reading(req(), read, 'read_lag', (f) => f.lag_from === 'already_used')?.lag_from).toBe('already_used');
    expect(registry.list().map((f) => f.hits)).toEqual([0, 1]);
  });

  it('the readings\' own options are refused on other modes', () => {
    expect(faultSpecSchema.safeParse({ endpoint: 'cards', mode: 'latency', lag_from: 'creation' }).success).toBe(false);
    expect(faultSpecSchema.safeParse({ endpoint: 'pull_requests', mode: 'async_error', shown_request_id: 'x' }).success).toBe(false);
    expect(faultSpecSchema.safeParse({ endpoint: 'pull_requests', mode: 'other_request_id', shown: 'another', shown_request_id: 'x' }).success).toBe(true);
    expect(faultSpecSchema.safeParse({ endpoint: 'any', mode: 'inventory_unlimited', gift_card_codes: ['A'] }).success).toBe(true);
  });

  it('SIM_FAULTS are installed at once and again by reset; a bad one names the setting', () => {
    const registry = new FaultRegistry({ SIM_FAULTS: [{ endpoint: 'any', mode: 'rate_limited', share: 0.1 }] });
    expect(registry.list().map((f) => f.mode)).toEqual(['rate_limited']);
    registry.clear();
    registry.reset();
    expect(registry.list().map((f) => f.mode)).toEqual(['rate_limited']);
    expect(() => new FaultRegistry({ SIM_FAULTS: [{ endpoint: 'read', mode: 'hang' }] })).toThrow(/^SIM_FAULTS: fault 1 is not valid \(endpoint/);
  });
});
