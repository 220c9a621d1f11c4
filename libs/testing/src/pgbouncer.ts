import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { TEST_SERVER_URL } from './test-db';

/** Debian's package (`apt-get install pgbouncer`; `.ci/run` installs it when missing). */
export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface TestPgBouncer {
  port: number;
  /** SHOW STATS of the pooler's admin console: per database, the transactions and queries it passed on. */
  stats(): Promise<{ database: string; total_xact_count: string; total_query_count: string }[]>;
  /** The same database as `databaseUrl`, through the pooler. */
  url(databaseUrl: string): string;
  /** The pooler's log so far (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A real PgBouncer in front of the test Postgres, in transaction pooling mode (every database, trust
 * authentication), started for one suite and stopped by it. PgBouncer refuses to run as root: as root it
 * is started with `-u postgres`, and its files are made readable for that user.
 */
export async function startPgBouncer(opts: { poolSize?: number; serverUrl?: string } = {}): Promise<TestPgBouncer> {
  if (!existsSync(PGBOUNCER_BIN)) {
    throw new Error(`${PGBOUNCER_BIN} is missing: install Debian's pgbouncer (\`apt-get install pgbouncer\`; .ci/run does it when missing), or set PGBOUNCER_BIN`);
  }
  const serverUrl = opts.serverUrl ?? TEST_SERVER_URL;
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cardpull-pgbouncer-'));
  chmodSync(dir, 0o777);
  const logFile = join(dir, 'pgbouncer.log');
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `admin_users = ${user}`,
      'max_client_conn = 1000',
      `default_pool_size = ${opts.poolSize ?? 20}`,
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${logFile}`,
      '',
    ].join('\n'),
  );
  for (const f of ['users.txt', 'pgbouncer.ini']) chmodSync(join(dir, f), 0o644);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_BIN, [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const log = () => `${output}${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`;
  const url = (databaseUrl: string) => {
    const u = new URL(databaseUrl);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const text = log();
      await stop();
      throw new Error(`pgbouncer exited (${child.exitCode}) at start:\n${text}`);
    }
    const probe = new Client({ connectionString: url(serverUrl) });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.query('SELECT 1');
      await probe.end();
      break;
    } catch (error) {
      await probe.end().catch(() => undefined);
      if (Date.now() > deadline) {
        const text = log();
        await stop();
        throw new Error(`pgbouncer did not answer on port ${port} within 10 s (${(error as Error).message}):\n${text}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stats = async () => {
    const admin = new Client({ connectionString: url(serverUrl).replace(/\/[^/?]*(\?|$)/, '/pgbouncer$1') });
    await admin.connect();
    try {
      // The admin console speaks the simple query protocol only.
      const result = await admin.query({ text: 'SHOW STATS', queryMode: 'simple' } as unknown as string);
      return result.rows as { database: string; total_xact_count: string; total_query_count: string }[];
    } finally {
      await admin.end();
    }
  };
  return { port, url, log, stop, stats };
}
