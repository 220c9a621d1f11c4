import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { checkPostgresServer } from '../libs/db/src/preflight';
import { checkRedis } from '../libs/queue/src/redis';
import { TEMPLATE_DATABASE_URL } from '../libs/testing/src/test-db';
import { TEST_REDIS_URL } from '../libs/testing/src/test-redis';

/**
 * Once per `npm test`: a fresh template database with every migration applied through the same command
 * operators use (`npm run db:migrate`), from which each suite copies its own database.
 */
export default async function globalSetup(): Promise<void> {
  const problems = [
    await checkPostgresServer(TEMPLATE_DATABASE_URL, 'TEST_DATABASE_URL'),
    (await checkRedis(TEST_REDIS_URL, 'TEST_REDIS_URL')).error,
  ].filter((p): p is string => !!p);
  if (problems.length) {
    // Thrown as a plain message: jest prints it instead of a stack trace of pg or ioredis.
    throw new Error(`The tests need PostgreSQL and Redis.\n${problems.join('\n')}`);
  }
  const url = new URL(TEMPLATE_DATABASE_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(TEMPLATE_DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    // Leftover suite databases of earlier interrupted runs.
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'cardpull\\_t\\_%'",
    );
    for (const row of rows) {
      const pid = Number(row.datname.split('_')[2]);
      if (!isAlive(pid)) await client.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`);
    }
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'prisma-wasm.mjs'), 'migrate'], {
    env: { ...process.env, DATABASE_URL: TEMPLATE_DATABASE_URL },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
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
