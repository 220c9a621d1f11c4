import type { ServiceConfig } from '@cardpull/config';
import { checkPostgres } from '@cardpull/db';
import { checkRedis } from '@cardpull/queue';

/**
 * Before Nest starts: Postgres (reachable, migrated) and Redis (reachable; eviction policy). On failure,
 * prints what is wrong, where, and how to get it, then exits 1, instead of a stack trace.
 */
export async function preflightOrExit(config: ServiceConfig, processName: string): Promise<void> {
  const [postgres, redis] = await Promise.all([checkPostgres(config.DATABASE_URL), checkRedis(config)]);
  for (const warning of redis.warnings) process.stderr.write(`[${processName}] warning: ${warning}\n`);
  const problems = [postgres, redis.error].filter((p): p is string => !!p);
  if (problems.length) {
    process.stderr.write(`[${processName}] cannot start:\n${problems.map((p) => `- ${p}`).join('\n')}\n`);
    process.exit(1);
  }
}
