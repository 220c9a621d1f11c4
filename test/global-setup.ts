import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { checkPostgresServer } from '../libs/db/src/preflight';
import { checkRedis } from '../libs/queue/src/redis';
import { TEST_SERVER_URL, dropDatabase, templateDatabaseUrl } from '../libs/testing/src/test-db';
import { TEST_REDIS_URL } from '../libs/testing/src/test-redis';

/**
 * Once per test run: checks Postgres and Redis, then migrates a fresh template database with the same
 * command operators use (`npm run db:migrate`); each suite copies its own database from it. The run id
 * (this process's pid) reaches the test workers through the environment.
 */
export default async function globalSetup(): Promise<void> {
  const problems = [
    await checkPostgresServer(TEST_SERVER_URL, 'TEST_DATABASE_URL'),
    (await checkRedis(TEST_REDIS_URL, 'TEST_REDIS_URL')).error,
  ].filter((p): p is string => !!p);
  if (problems.length) {
    // Thrown as a plain message: jest prints it instead of a stack trace of pg or ioredis.
    throw new Error(`The tests need PostgreSQL and Redis.\n${problems.join('\n')}`);
  }
  process.env.CARDPULL_TEST_RUN = String(process.pid);
  await dropLeftovers();
  const template = templateDatabaseUrl(process.pid);
  execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'prisma-wasm.mjs'), 'migrate'], {
    env: { ...process.env, DATABASE_URL: template },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Databases of earlier runs that were interrupted (their process is gone). */
async function dropLeftovers(): Promise<void> {
  const client = new Client({ connectionString: TEST_SERVER_URL });
  await client.connect();
  let names: string[];
  try {
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname ~ '^cardpull_(t|tpl)_[0-9]+'",
    );
    names = rows.map((r) => r.datname).filter((n) => !isAlive(Number(n.split('_')[2])));
  } finally {
    await client.end();
  }
  for (const name of names) await dropDatabase(name);
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
