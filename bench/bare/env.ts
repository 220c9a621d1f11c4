import { Pool } from 'pg';

/** A setting of a bare script, from its environment (set by bench/support/stack.ts), or its default. */
export const env = (name: string, def?: string): string => {
  const v = process.env[name] ?? def;
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};

/** The bare scripts' Postgres pool: DATABASE_URL, POOL_SIZE connections (the service's pool size by default). */
export function barePool(): Pool {
  const pool = new Pool({ connectionString: env('DATABASE_URL'), max: Number(env('POOL_SIZE', '10')) });
  pool.on('error', () => undefined);
  return pool;
}
