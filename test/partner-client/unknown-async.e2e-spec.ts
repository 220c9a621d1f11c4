import { randomUUID } from 'node:crypto';
import type { FaultSpecInput } from '@cardpull/testing';
import { cardsIssued, pollUntilFinished, useSimulatorAndClient, valueOf } from './support/client';

// The asynchronous pull through faults: ARCHITECTURE.md "Partner calls and their classification" rows
// unknown (timeout, network, 5xx), 422 unprocessable_entity on creation (the earlier create reached the
// partner: poll), 404 pull_request_not_found (the create never reached it: create again), async status error.

const { sim, client } = useSimulatorAndClient({ SIM_MODE: 'staging' });

/**
 * A creation whose answer one `fault` loses: the client's outcome; yet the partner has the pull request,
 * creating again says so, polling gets the card.
 */
async function createdAnywayAndPollable(fault: Omit<FaultSpecInput, 'endpoint' | 'times'>, outcome: object) {
  await sim.control.addFault({ endpoint: 'pull_requests', ...fault, times: 1 });
  const requestId = randomUUID();
  expect(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000)).toMatchObject(outcome);
  expect((await sim.control.state()).counts.pull_requests).toBe(1);
  expect(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000)).toMatchObject({
    kind: 'request_id_used',
    httpStatus: 422,
  });
  const finished = await pollUntilFinished(client, requestId);
  expect(finished).toMatchObject({ status: 'success', request_id: requestId });
  expect(await cardsIssued(sim)).toEqual([expect.objectContaining({ id: finished.card!.id, request_id: requestId })]);
}

describe('Timeout on POST /pull_requests (hang) -> unknown/timeout; the pull request exists (request ID used), polling gets the card', () => {
  it('hang', () => createdAnywayAndPollable({ mode: 'hang', latency_ms: 5_000 }, { kind: 'unknown', reason: 'timeout' }));
});

describe('5xx after the creation (error_after_issue) -> unknown/server_error; the pull request exists', () => {
  it('500 HTML page', () =>
    createdAnywayAndPollable({ mode: 'error_after_issue' }, { kind: 'unknown', reason: 'server_error', httpStatus: 500 }));
});

describe('Network error on the creation (connection reset) -> unknown/network; the pull request exists', () => {
  it('reset', () => createdAnywayAndPollable({ mode: 'reset' }, { kind: 'unknown', reason: 'network' }));
});

describe('5xx before the creation (error_before_issue 503) -> unknown/server_error; then 404 pull_request_not_found -> create again with the same ID', () => {
  it('nothing created; polling says not_found; the same ID is then created normally', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'error_before_issue', times: 1 });
    const requestId = randomUUID();
    expect(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000)).toMatchObject({
      kind: 'unknown',
      reason: 'server_error',
      httpStatus: 503,
    });
    expect((await sim.control.state()).counts.pull_requests).toBe(0);
    expect(await client.getPullRequest(requestId)).toMatchObject({ kind: 'not_found', code: 'pull_request_not_found' });
    expect(valueOf(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000))).toMatchObject({ status: 'waiting' });
    expect(await pollUntilFinished(client, requestId)).toMatchObject({ status: 'success' });
  });
});

describe('Unknown outcomes while polling GET /pull_requests/:request_id -> unknown; polling again goes on', () => {
  it.each<[string, Omit<FaultSpecInput, 'endpoint' | 'times'>, object]>([
    ['503 page -> unknown/server_error', { mode: 'error_before_issue' }, { kind: 'unknown', reason: 'server_error', httpStatus: 503 }],
    ['hang -> unknown/timeout', { mode: 'hang', latency_ms: 5_000 }, { kind: 'unknown', reason: 'timeout' }],
    ['reset -> unknown/network', { mode: 'reset' }, { kind: 'unknown', reason: 'network' }],
  ])('%s', async (_rule, fault, outcome) => {
    const requestId = randomUUID();
    valueOf(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000));
    await sim.control.addFault({ endpoint: 'pull_request_status', ...fault, times: 1 });
    expect(await client.getPullRequest(requestId)).toMatchObject(outcome);
    expect(await pollUntilFinished(client, requestId)).toMatchObject({ status: 'success' });
  });
});

describe('Pull request status error (failure during the pull: async_error) -> polling shows error, card null', () => {
  it('ends in error, no card issued; a new request ID pulls normally', async () => {
    await sim.control.addFault({ endpoint: 'pull_requests', mode: 'async_error', times: 1 });
    const requestId = randomUUID();
    expect(valueOf(await client.createPullRequest(requestId, 'ACME-BOOKS-FIXED', 1000))).toMatchObject({
      status: 'waiting',
      card: null,
    });
    const finished = await pollUntilFinished(client, requestId);
    expect(finished).toMatchObject({ status: 'error', request_id: requestId, card: null });
    // The outcome of the poll itself is a success: the pull request was read; its status carries the failure.
    expect(await client.getPullRequest(requestId)).toMatchObject({ kind: 'success', value: { status: 'error' } });
    expect(await cardsIssued(sim)).toEqual([]);

    const next = randomUUID();
    valueOf(await client.createPullRequest(next, 'ACME-BOOKS-FIXED', 1000));
    expect(await pollUntilFinished(client, next)).toMatchObject({ status: 'success' });
  });
});

describe('Staging: card-pulling that does not work for some brands (STG-BROKEN), asynchronously -> status error', () => {
  it('created waiting, ends in error without a card', async () => {
    const requestId = randomUUID();
    valueOf(await client.createPullRequest(requestId, 'STG-BROKEN', 1000));
    expect(await pollUntilFinished(client, requestId)).toMatchObject({ status: 'error', card: null });
    expect(await cardsIssued(sim)).toEqual([]);
  });
});
