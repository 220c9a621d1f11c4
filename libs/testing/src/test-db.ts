import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';

/**
 * Every suite gets its own database, copied from a template that jest's global setup migrated once
 * (test/global-setup.ts), so suites never see each other's rows and can run in parallel. The template is
 * per test run (its name carries the run's pid), so two runs on one machine do not trip over each other.
 * TEST_DATABASE_URL names the server (its database part is ignored).
 */
export const TEST_SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export function templateDatabaseUrl(runId: number | string = process.env.CARDPULL_TEST_RUN ?? process.pid): string {
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/cardpull_tpl_${runId}`;
  return url.toString();
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function adminUrl(url: string): string {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return admin.toString();
}

async function withAdmin<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl(url) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const TEMPLATE_DATABASE_URL = templateDatabaseUrl();
  const template = new URL(TEMPLATE_DATABASE_URL);
  const templateName = decodeURIComponent(template.pathname.slice(1));
  const name = `cardpull_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdmin(TEMPLATE_DATABASE_URL, async (client) => {
    // CREATE DATABASE ... TEMPLATE needs the template to have no other session: retry briefly if one is closing.
    for (let i = 0; ; i++) {
      try {
        await client.query(`CREATE DATABASE "${name}" TEMPLATE "${templateName}"`);
        return;
      } catch (error) {
        if (i >= 20 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  const url = new URL(TEMPLATE_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => dropDatabase(name),
  };
}

export function dropDatabase(name: string): Promise<void> {
  return withAdmin(TEST_SERVER_URL, (c) => c.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`)).then(() => undefined);
}

/**
 * A pg Pool for a suite's own queries against its test database. Its errors are ignored: `pool.end()`
 * resolves before its connections have closed, and the drop of the database at the end of the suite
 * (WITH (FORCE)) terminates those still closing; without a listener that error would fail the suite.
 */
export function testPool(url: string, max = 2): Pool {
  const pool = new Pool({ connectionString: url, max });
  pool.on('error', () => undefined);
  return pool;
}
