import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { request } from 'undici';
import { createFastifyAdapter } from '@cardpull/logger';
import { EnvelopeExceptionFilter } from '@cardpull/platform';
import { ApiModule } from '../../apps/api/src/api.module';
import { setupApiDocs } from '../../apps/api/src/docs/openapi';
import { KEYS, startStack, type Stack } from '../support/stack';

/**
 * Every route of the API process needs authentication except /health/*: the API (/v1, /metrics) an API
 * key with the right scope, the operations page and the job dashboard an operator's session, the docs an
 * API key or an operator. The routes are collected from Fastify itself, so a new route cannot slip by.
 */
describe('security: every route but health needs authentication', () => {
  let stack: Stack;
  let app: NestFastifyApplication;
  let base: string;
  const routes: { method: string; url: string }[] = [];

  beforeAll(async () => {
    stack = await startStack({ api: false });
    // Built as main.ts builds it (with /docs), with a hook that records every route Fastify registers.
    const adapter = createFastifyAdapter({ bodyLimit: 16 * 1024 });
    adapter.getInstance().addHook('onRoute', (r) => {
      for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url });
    });
    app = await NestFactory.create<NestFastifyApplication>(ApiModule.forConfig(stack.config, stack.logs), adapter, { bufferLogs: true });
    app.useLogger(app.get(Logger));
    app.useGlobalFilters(new EnvelopeExceptionFilter());
    setupApiDocs(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await stack?.close();
  });

  const send = async (method: string, path: string, authorization?: string) => {
    const res = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: { ...(authorization ? { authorization } : {}), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'POST' ? '{}' : undefined,
    });
    await res.body.dump();
    return res.statusCode;
  };
  const concrete = (url: string) => url.replace(/:[A-Za-z_]+/g, '00000000-0000-7000-8000-000000000000').replace(/\*$/, 'x');
  const open = (url: string) => /^\/health\//.test(url) || /^\/admin\/login/.test(url) || /^\/admin\/assets\//.test(url);

  it('the route list is complete enough to mean something', () => {
    const urls = routes.map((r) => `${r.method} ${r.url}`);
    for (const expected of ['POST /v1/orders', 'GET /v1/orders/:id', 'GET /metrics', 'GET /docs/json', 'GET /admin', 'GET /health/ready']) {
      expect(urls).toContain(expected);
    }
    expect(routes.length).toBeGreaterThan(20);
  });

  it('without credentials, every route but health (and the login page) is refused', async () => {
    const admitted: string[] = [];
    for (const r of routes.filter((r) => !open(r.url))) {
      const status = await send(r.method, concrete(r.url));
      // 401/403 for APIs, a redirect to the login page for the operations page and the dashboard.
      if (![401, 403, 302, 303].includes(status)) admitted.push(`${r.method} ${r.url} -> ${status}`);
    }
    expect(admitted).toEqual([]);
  });

  it('a wrong API key is refused everywhere an API key is accepted', async () => {
    const admitted: string[] = [];
    for (const r of routes.filter((r) => /^\/(v1|metrics|docs)/.test(r.url))) {
      const status = await send(r.method, concrete(r.url), 'Bearer wrong-key-1234567');
      if (status !== 401) admitted.push(`${r.method} ${r.url} -> ${status}`);
    }
    expect(admitted).toEqual([]);
  });

  it.each([
    ['POST', '/v1/orders', 'orders:write', KEYS.readOnly],
    ['GET', '/v1/orders', 'orders:read', KEYS.scraper],
    ['GET', '/v1/balance', 'orders:read', KEYS.scraper],
    ['GET', '/metrics', 'metrics:read', KEYS.readOnly],
  ])('%s %s with a key lacking %s -> 403', async (method, path, _scope, key) => {
    expect(await send(method, path, `Bearer ${key}`)).toBe(403);
  });

  it('an API key does not open the operations page or the dashboard (operators log in)', async () => {
    for (const path of ['/admin', '/admin/queues', '/admin/orders/00000000-0000-7000-8000-000000000000']) {
      expect([302, 303, 401]).toContain(await send('GET', path, `Bearer ${KEYS.shop}`));
    }
  });

  it('health needs nothing', async () => {
    expect(await send('GET', '/health/live')).toBe(200);
  });

  it('the worker: /metrics needs a key with metrics:read, health needs nothing', async () => {
    const worker = `http://127.0.0.1:${(stack.worker!.getHttpServer().address() as AddressInfo).port}`;
    const get = async (path: string, key?: string) => {
      const res = await request(`${worker}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
      await res.body.dump();
      return res.statusCode;
    };
    expect(await get('/metrics')).toBe(401);
    expect(await get('/metrics', KEYS.readOnly)).toBe(403);
    expect(await get('/metrics', KEYS.scraper)).toBe(200);
    expect(await get('/health/live')).toBe(200);
  });
});
