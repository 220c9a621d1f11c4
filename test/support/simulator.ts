import type { AddressInfo } from 'node:net';
import { loadSimConfig, type SimConfig } from '@cardpull/config';
import { SimControl, signedRequest, type SignedRequestOptions, type SimResponse } from '@cardpull/testing';
import { createSimApp } from '../../apps/partner-sim/src/sim.app';

// The partner simulator started in the test process (tests may import apps; libs/testing may not, so the
// HTTP helpers it starts with, SimControl and signedRequest, live there and this file starts the app).

export interface SimHandle {
  baseUrl: string;
  config: SimConfig;
  control: SimControl;
  /** signedRequest against this simulator, with its credentials. */
  request<T = unknown>(opts: SignedRequestOptions): Promise<SimResponse<T>>;
  close(): Promise<void>;
}

/**
 * Starts the partner simulator in-process on 127.0.0.1 and an ephemeral port, with the control API on,
 * 200 ms async pulls and no logs unless `env` says otherwise. Close it in afterAll (or see useSimulator).
 */
export async function startSimulator(env: Record<string, string> = {}): Promise<SimHandle> {
  const config = loadSimConfig({ SIM_CONTROL: 'true', SIM_ASYNC_DELAY_MS: '200', LOG_LEVEL: 'silent', ...env });
  const app = await createSimApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.getHttpServer().address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    config,
    control: new SimControl(baseUrl),
    request: (opts) =>
      signedRequest(baseUrl, {
        apiKey: config.SIM_API_KEY,
        identifier: config.SIM_IDENTIFIER,
        sharedKeyHex: config.SIM_SHARED_KEY,
        ...opts,
      }),
    close: () => app.close(),
  };
}

export interface UseSimulatorOptions {
  /** Runs in afterAll before the simulator closes (e.g. closing the clients that keep connections to it). */
  beforeClose?: () => Promise<void>;
}

/**
 * The usual simulator set-up of a test file (or describe block), as jest hooks: startSimulator(env) in
 * beforeAll, control.reset() before each test, close in afterAll. The handle answers for the simulator
 * started by beforeAll, so read it inside tests and hooks (declared after this call), not while tests are
 * being collected.
 */
export function useSimulator(env: Record<string, string> = {}, opts: UseSimulatorOptions = {}): SimHandle {
  let started: SimHandle | undefined;
  const sim = (): SimHandle => {
    if (!started) throw new Error('useSimulator: the simulator is started in beforeAll; use it inside tests and hooks');
    return started;
  };
  const close = async (): Promise<void> => {
    const closing = started;
    started = undefined;
    await closing?.close();
  };
  beforeAll(async () => {
    started = await startSimulator(env);
  });
  beforeEach(() => sim().control.reset());
  afterAll(async () => {
    await opts.beforeClose?.();
    await close();
  });
  return {
    get baseUrl() {
      return sim().baseUrl;
    },
    get config() {
      return sim().config;
    },
    get control() {
      return sim().control;
    },
    request: (o) => sim().request(o),
    close,
  };
}
