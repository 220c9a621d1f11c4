import { randomUUID } from 'node:crypto';
import type { PartnerOutcome, UnknownReason } from '@cardpull/partner-client';
import type { FaultSpecInput } from '@cardpull/testing';
import { waitFor } from '@cardpull/testing';
import { clientFor, requestsFor, requestsTo, useSimulatorAndClient, valueOf } from './support/client';

// PartnerClient: "No retries here: retrying is the jobs' business". Whatever the outcome, one client call is
// one partner request, counted in the simulator's ledger (by request ID, or by path for the reads).

// A shorter deadline than the other files: five cases here wait for it.
const { sim, client } = useSimulatorAndClient({ SIM_MODE: 'staging' }, { timeoutMs: 400 });

const HANG = { mode: 'hang', latency_ms: 5_000 } as const;

interface Case {
  fault?: Omit<FaultSpecInput, 'times'>;
  /** Runs before the fault is added (e.g. creates the pull request to poll). */
  prepare?: (requestId: string) => Promise<unknown>;
  call: (requestId: string) => Promise<PartnerOutcome<unknown>>;
  reason: UnknownReason;
  /** Which ledger rows belong to the call: its request ID, or a read's path. */
  path?: string;
}

const createCard = (id: string) => client.createCard(id, 'ACME-BOOKS-FIXED', 1000);
const createPullRequest = (id: string) => client.createPullRequest(id, 'ACME-BOOKS-FIXED', 1000);
const created = async (id: string) => valueOf(await createPullRequest(id));

const CASES: Record<string, Case> = {
  'POST /cards, hang -> timeout': { fault: { endpoint: 'cards', ...HANG }, call: createCard, reason: 'timeout' },
  'POST /cards, error_after_issue -> server_error': {
    fault: { endpoint: 'cards', mode: 'error_after_issue' },
    call: createCard,
    reason: 'server_error',
  },
  'POST /cards, error_before_issue -> server_error': {
    fault: { endpoint: 'cards', mode: 'error_before_issue' },
    call: createCard,
    reason: 'server_error',
  },
  'POST /cards, 429 -> rate_limited': {
    fault: { endpoint: 'cards', mode: 'error_before_issue', status: 429 },
    call: createCard,
    reason: 'rate_limited',
  },
  'POST /cards, reset -> network': { fault: { endpoint: 'cards', mode: 'reset' }, call: createCard, reason: 'network' },
  'POST /cards, come_back_later -> in_progress': {
    fault: { endpoint: 'cards', mode: 'come_back_later', latency_ms: 5_000 },
    call: createCard,
    reason: 'in_progress',
  },
  'POST /cards, STG-BROKEN in staging -> server_error': {
    call: (id) => client.createCard(id, 'STG-BROKEN', 1000),
    reason: 'server_error',
  },
  'POST /pull_requests, hang -> timeout': {
    fault: { endpoint: 'pull_requests', ...HANG },
    call: createPullRequest,
    reason: 'timeout',
  },
  'POST /pull_requests, error_after_issue -> server_error': {
    fault: { endpoint: 'pull_requests', mode: 'error_after_issue' },
    call: createPullRequest,
    reason: 'server_error',
  },
  'POST /pull_requests, error_before_issue -> server_error': {
    fault: { endpoint: 'pull_requests', mode: 'error_before_issue' },
    call: createPullRequest,
    reason: 'server_error',
  },
  'POST /pull_requests, reset -> network': {
    fault: { endpoint: 'pull_requests', mode: 'reset' },
    call: createPullRequest,
    reason: 'network',
  },
  'GET /pull_requests/:id, hang -> timeout': {
    prepare: created,
    fault: { endpoint: 'pull_request_status', ...HANG },
    call: (id) => client.getPullRequest(id),
    reason: 'timeout',
  },
  'GET /pull_requests/:id, error_before_issue -> server_error': {
    prepare: created,
    fault: { endpoint: 'pull_request_status', mode: 'error_before_issue' },
    call: (id) => client.getPullRequest(id),
    reason: 'server_error',
  },
  'GET /pull_requests/:id, reset -> network': {
    prepare: created,
    fault: { endpoint: 'pull_request_status', mode: 'reset' },
    call: (id) => client.getPullRequest(id),
    reason: 'network',
  },
  'GET /balance, hang -> timeout': {
    fault: { endpoint: 'any', ...HANG },
    call: () => client.getBalance(),
    reason: 'timeout',
    path: '/partners/v1/balance',
  },
  'GET /balance, reset -> network': {
    fault: { endpoint: 'any', mode: 'reset' },
    call: () => client.getBalance(),
    reason: 'network',
    path: '/partners/v1/balance',
  },
  'GET /gift_cards, error_before_issue -> server_error': {
    fault: { endpoint: 'any', mode: 'error_before_issue' },
    call: () => client.listGiftCards(),
    reason: 'server_error',
    path: '/partners/v1/gift_cards',
  },
  'GET /inventories/:id, reset -> network': {
    fault: { endpoint: 'any', mode: 'reset' },
    call: () => client.getInventory('ACME-BOOKS-FIXED'),
    reason: 'network',
    path: '/partners/v1/inventories/ACME-BOOKS-FIXED',
  },
  'GET /cards/:id, hang -> timeout': {
    fault: { endpoint: 'any', ...HANG },
    call: () => client.getCard('00000000-0000-4000-8000-000000000000'),
    reason: 'timeout',
    path: '/partners/v1/cards/00000000-0000-4000-8000-000000000000',
  },
};

/** Ledger rows of this case's call. */
const rowsOf = (c: Case, requestId: string) => (c.path ? requestsTo(sim, c.path) : requestsFor(sim, requestId));

describe('The client never retries on its own: one unknown outcome = exactly one partner request', () => {
  it.each(Object.entries(CASES))('%s', async (_name, c) => {
    const requestId = randomUUID();
    await c.prepare?.(requestId);
    const before = (await rowsOf(c, requestId)).length;
    // Faults hit every matching request (no `times`): a retry would meet the same fault and show in the ledger.
    if (c.fault) await sim.control.addFault(c.fault as FaultSpecInput);
    expect(await c.call(requestId)).toMatchObject({ kind: 'unknown', reason: c.reason });
    // A held (hang) request shows in the ledger at once; give a late retry a moment to show too.
    await new Promise((r) => setTimeout(r, 100));
    const rows = (await rowsOf(c, requestId)).slice(before);
    expect(rows).toHaveLength(1);
    if (c.fault) expect(rows[0]).toMatchObject({ fault: c.fault.mode });
  });
});

describe('The client never retries on its own: each call, whatever its outcome, is one partner request', () => {
  it('come back later twice, then the card: three calls, three requests', async () => {
    await sim.control.addFault({ endpoint: 'cards', mode: 'come_back_later', latency_ms: 2_000, times: 1 });
    const requestId = randomUUID();
    expect((await createCard(requestId)).kind).toBe('unknown');
    expect((await createCard(requestId)).kind).toBe('unknown');
    await waitFor('the card to be issued', async () => (await sim.control.ledger()).cards.length === 1, 10_000);
    expect((await createCard(requestId)).kind).toBe('success');
    expect((await requestsFor(sim, requestId)).map((r) => r.status)).toEqual([409, 409, 200]);
  });

  it('definitive and credentials outcomes: one request each', async () => {
    const unknownCode = randomUUID();
    expect((await client.createCard(unknownCode, 'NO-SUCH-CARD', 1000)).kind).toBe('definitive');
    expect(await requestsFor(sim, unknownCode)).toHaveLength(1);
    const refused = randomUUID();
    expect((await clientFor(sim, { apiKey: 'wrong' }).createCard(refused, 'ACME-BOOKS-FIXED', 1000)).kind).toBe('credentials');
    expect(await requestsFor(sim, refused)).toHaveLength(1);
  });
});
