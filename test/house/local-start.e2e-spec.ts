import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dropDatabase, waitFor } from '@cardpull/testing';

const ROOT = join(__dirname, '..', '..');

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

/**
 * Issue 14, item 7: `npm start` reads like a person expects. The processes still write JSON lines (what
 * production keeps); the launcher shows them one readable line each (pino-pretty), leaves Nest's start-up
 * inventory out, and once the three processes are up says where the API, its docs, the operations page,
 * the dashboard and the simulator are. LOG_FORMAT=json keeps the raw lines.
 */
describe('npm start (scripts/start-all.mjs): readable logs and a first screen saying where everything is', () => {
  const database = `cardpull_start_${process.pid}`;
  afterAll(() => dropDatabase(database));

  it('prints no raw JSON line, no route inventory, and the first screen with the URLs; Ctrl-C stops all three', async () => {
    const [api, worker, sim] = [await freePort(), await freePort(), await freePort()];
    const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
    server.pathname = `/${database}`;
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'start-all.mjs')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        SKIP_BUILD: '1',
        DATABASE_URL: server.toString(),
        REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
        REDIS_PREFIX: `cptest-start-${process.pid}`,
        PORT: String(api),
        WORKER_PORT: String(worker),
        SIM_PORT: String(sim),
        PARTNER_BASE_URL: `http://127.0.0.1:${sim}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await waitFor('the first screen', () => /cardpull is running[\s\S]*Partner simulator.*\n/.test(out), 45_000, 100);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    const lines = out.split('\n').filter((l) => /^\[(api|worker|sim)\] /.test(l));
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.filter((l) => /^\[\w+\] \{/.test(l))).toEqual([]);
    expect(lines.filter((l) => /Mapped \{|dependencies initialized/.test(l))).toEqual([]);
    expect(lines.some((l) => /^\[api\] \[\d\d:\d\d:\d\d\.\d{3}\] INFO: /.test(l))).toBe(true);
    for (const where of [`http://127.0.0.1:${api}/v1/orders`, `http://127.0.0.1:${api}/docs`, `http://127.0.0.1:${api}/admin`, `http://127.0.0.1:${api}/admin/queues`, `http://127.0.0.1:${sim}`]) {
      expect(out).toContain(where);
    }
  }, 90_000);

  it("the README's sample of a missing Redis is what the launcher prints, and a start with nothing changed since the last build does not build", async () => {
    const closed = await freePort();
    // The sources as they are now were built (npm test writes the stamp after its builds; written here
    // again so the case does not depend on how jest was started).
    const { writeStamp } = (await import(join(ROOT, 'scripts', 'source-stamp.mjs'))) as { writeStamp(root: string): void };
    writeStamp(ROOT);
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'start-all.mjs')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', REDIS_URL: `redis://127.0.0.1:${closed}`, DATABASE_URL: process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(out).toContain('[start] build is up to date');
    expect(out).not.toContain('[start] building');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const sample = /```\n(\[start\] cardpull needs PostgreSQL and Redis:[\s\S]*?)```/.exec(readme)?.[1];
    expect(sample).toBeDefined();
    expect(out.slice(out.indexOf('[start] cardpull needs'))).toBe(sample!.replaceAll('6379 (', `${closed} (`).replaceAll('127.0.0.1:6379.', `127.0.0.1:${closed}.`));
  }, 60_000);
});
