import type { FastifyRequest } from 'fastify';
import { FaultRegistry } from './fault-registry';
import { faultSpecSchema, type FaultSpecInput } from './fault-spec';

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
});
