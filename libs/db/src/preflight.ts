import { Client } from 'pg';

/**
 * Start-up check of Postgres: reachable, database present, migrations applied. Returns a message for an
 * operator (what is wrong, where, how to fix it) instead of letting a stack trace explain it.
 */
export async function checkPostgres(databaseUrl: string, setting = 'DATABASE_URL'): Promise<string | null> {
  const url = new URL(databaseUrl);
  const where = `${url.hostname}:${url.port || 5432}`;
  const database = decodeURIComponent(url.pathname.slice(1));
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    const err = error as { code?: string; message?: string };
    if (err.code === '3D000') {
      return `PostgreSQL at ${where} has no database "${database}" (${setting}). Create it and its tables with \`npm run db:migrate\`.`;
    }
    return unreachable(where, setting, err);
  }
  try {
    const { rows } = await client.query<{ exists: boolean }>(
      "SELECT to_regclass('public._prisma_migrations') IS NOT NULL AND to_regclass('public.orders') IS NOT NULL AS exists",
    );
    if (!rows[0]?.exists) {
      return `PostgreSQL database "${database}" at ${where} has no cardpull tables: run \`npm run db:migrate\`.`;
    }
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Only "is the server there": for tools that create their own databases (the test setup, db:migrate). */
export async function checkPostgresServer(databaseUrl: string, setting = 'DATABASE_URL'): Promise<string | null> {
  const url = new URL(databaseUrl);
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return null;
  } catch (error) {
    return unreachable(`${url.hostname}:${url.port || 5432}`, setting, error as { code?: string; message?: string });
  } finally {
    await client.end().catch(() => undefined);
  }
}

function unreachable(where: string, setting: string, err: { code?: string; message?: string }): string {
  // pg's message usually names the code already ("connect ECONNREFUSED ..."): once, without a trailing stop.
  const message = err.message ?? '';
  const said = (err.code && !message.includes(err.code) ? `${err.code} ${message}` : message).trim().replace(/\.+$/, '');
  return (
    `Cannot reach PostgreSQL at ${where} (${setting}): ${said}.\n` +
    '  Install it from your distribution (Debian: `apt-get install postgresql`, then `pg_ctlcluster 15 main start`), ' +
    `or set ${setting} to a reachable server (\`docker compose up -d postgres\` gives one at postgresql://postgres:postgres@127.0.0.1:55432/cardpull).`
  );
}
