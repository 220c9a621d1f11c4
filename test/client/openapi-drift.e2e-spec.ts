import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { API_ERROR_STATUS, ERROR_CLASSES } from '@cardpull/client';
import { createHttpApp } from '@cardpull/platform';
import { ApiModule } from '../../apps/api/src/api.module';
import { API_ERRORS } from '../../apps/api/src/docs/api-errors';
import { setupApiDocs } from '../../apps/api/src/docs/openapi';
import { builtEntry } from '../support/processes';
import { KEYS, startStack, type Stack } from '../support/stack';

const ROOT = join(__dirname, '..', '..');
const DOCUMENT = join(ROOT, 'libs', 'client', 'openapi.json');
const TYPES_SCRIPT = join(ROOT, 'scripts', 'openapi-types.mjs');

/** Runs a Node script to its end without blocking this process (the API under test runs in it). */
function node(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('the client library is typed from the committed OpenAPI document, which cannot drift from the running API', () => {
  let stack: Stack;
  let api: NestFastifyApplication | undefined;
  let live: unknown;
  const tmp = mkdtempSync(join(tmpdir(), 'openapi-drift-'));
  beforeAll(async () => {
    stack = await startStack({ api: false, worker: false });
    // As apps/api/src/main.ts serves it: createHttpApp, then setupApiDocs before listen.
    api = await createHttpApp(ApiModule.forConfig(stack.config, stack.logs), { bodyLimit: 16 * 1024 });
    setupApiDocs(api);
    await api.listen({ port: 0, host: '127.0.0.1' });
    const { port } = api.getHttpServer().address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/docs/json`, { headers: { authorization: `Bearer ${KEYS.readOnly}` } });
    expect(res.status).toBe(200);
    live = await res.json();
  });
  afterAll(async () => {
    await api?.close();
    await stack?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('libs/client/openapi.json is the running API\'s /docs/json (else: `npm run openapi:write` and commit)', () => {
    const committed = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
    expect(committed).toEqual(live);
    expect(Object.keys(committed.paths)).toContain('/v1/orders/by-idempotency-key/{key}');
  });

  it('`npm run openapi:write` (the built writer, no database) writes exactly the committed file', async () => {
    const out = join(tmp, 'openapi.json');
    const r = await node([builtEntry('api').replace(/main\.js$/, join('docs', 'write-openapi.js')), '--out', out]);
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('wrote')]);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(DOCUMENT, 'utf8'));
  });

  it('libs/client/src/api-types.ts is what scripts/openapi-types.mjs makes of the committed document, and the check fails on a drifted one', async () => {
    const ok = await node([TYPES_SCRIPT, '--check']);
    expect([ok.code, ok.out]).toEqual([0, expect.stringContaining('matches')]);
    // The same check against a document with one more field on Order: refused, saying what to run.
    const drifted = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
    drifted.components.schemas.Order.properties.extra = { type: 'string' };
    writeFileSync(join(tmp, 'drifted.json'), JSON.stringify(drifted));
    const refused = await node([TYPES_SCRIPT, '--check', '--document', join(tmp, 'drifted.json')]);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('npm run openapi:types');
  });

  it('the client has one error class per error code of the API, with its HTTP status', () => {
    const api = Object.fromEntries(Object.entries(API_ERRORS).map(([code, doc]) => [code, doc.status]));
    expect(API_ERROR_STATUS).toEqual(api);
    expect(Object.keys(ERROR_CLASSES).sort()).toEqual(Object.keys(API_ERRORS).sort());
    const names = new Set(Object.values(ERROR_CLASSES).map((c) => c.name));
    expect(names.size).toBe(Object.keys(API_ERRORS).length);
  });
});
