import { PartnerClient, type PartnerClientOptions, type PartnerOutcome } from '@cardpull/partner-client';
import { useSimulator, type SimHandle } from '../../support/simulator';
import { waitFor } from '@cardpull/testing';

/** Short enough that timeouts stay fast, long enough that a loaded CI machine answers an ordinary call. */
export const TIMEOUT_MS = 800;

/** Clients made by `clientFor`, closed by `closeClients` (afterAll / afterEach). */
const open: PartnerClient[] = [];

/** A PartnerClient with the simulator's credentials; `overrides` change one setting (a wrong key, the form...). */
export function clientFor(sim: SimHandle, overrides: Partial<PartnerClientOptions> = {}): PartnerClient {
  const client = new PartnerClient({
    baseUrl: sim.baseUrl,
    apiKey: sim.config.SIM_API_KEY,
    identifier: sim.config.SIM_IDENTIFIER,
    sharedKeyHex: sim.config.SIM_SHARED_KEY,
    signatureForm: 'example',
    timeoutMs: TIMEOUT_MS,
    ...overrides,
  });
  open.push(client);
  return client;
}

export async function closeClients(): Promise<void> {
  await Promise.all(open.splice(0).map((c) => c.close()));
}

/** Closes some clients before the others (e.g. before the proxy they talk through). */
export async function closeClient(...clients: PartnerClient[]): Promise<void> {
  for (const client of clients) {
    const at = open.indexOf(client);
    if (at >= 0) open.splice(at, 1);
  }
  await Promise.all(clients.map((c) => c.close()));
}

/**
 * The set-up of a client suite, as jest hooks: the simulator of `useSimulator(env)` (started before all tests,
 * reset before each) and one client of it, `clientFor(sim, overrides)`, made once it has started. Every client
 * made by clientFor is closed after all tests, before the simulator. Like the simulator, the client answers
 * for the one made in beforeAll: use both inside tests and hooks.
 */
export function useSimulatorAndClient(
  env: Record<string, string> = {},
  overrides: Partial<PartnerClientOptions> = {},
): { sim: SimHandle; client: PartnerClient } {
  const sim = useSimulator(env, { beforeClose: closeClients });
  let client: PartnerClient | undefined;
  beforeAll(() => {
    client = clientFor(sim, overrides);
  });
  afterAll(() => {
    client = undefined;
  });
  // Stands for the client made in beforeAll: each member is read from it at call time.
  const current = new Proxy({} as PartnerClient, {
    get(_target, key) {
      if (!client) throw new Error('useSimulatorAndClient: the client is made in beforeAll; use it inside tests and hooks');
      const member: unknown = Reflect.get(client, key, client);
      return typeof member === 'function' ? member.bind(client) : member;
    },
  });
  return { sim, client: current };
}

/** The value of a success, failing the test with the whole outcome otherwise. */
export function valueOf<T>(outcome: PartnerOutcome<T>): T {
  if (outcome.kind !== 'success') throw new Error(`expected success, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

/** Ledger rows of the partner requests that carried this request ID (X-RequestId, body or path). */
export async function requestsFor(sim: SimHandle, requestId: string) {
  return (await sim.control.ledger()).requests.filter((r) => r.request_id === requestId);
}

/** Ledger rows of the partner requests to one path (reads carry no request ID). */
export async function requestsTo(sim: SimHandle, path: string) {
  return (await sim.control.ledger()).requests.filter((r) => r.path === path);
}

export async function cardsIssued(sim: SimHandle) {
  return (await sim.control.ledger()).cards;
}

/** Polls the pull request through the client until it leaves waiting/processing; answers the last value. */
export async function pollUntilFinished(client: PartnerClient, requestId: string) {
  return waitFor(
    `pull request ${requestId} to finish`,
    async () => {
      const pr = valueOf(await client.getPullRequest(requestId));
      return pr.status === 'success' || pr.status === 'error' ? pr : undefined;
    },
    10_000,
    50,
  );
}
