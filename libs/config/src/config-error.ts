import type { z } from 'zod';

/** Thrown when one or more settings are missing or malformed; the message names every bad one. */
export class ConfigError extends Error {
  constructor(readonly problems: { setting: string; message: string }[]) {
    super(
      `Invalid settings:\n${problems.map((p) => `  - ${p.setting}: ${p.message}`).join('\n')}\n` +
        'See .env.example for every setting and its default.',
    );
    this.name = 'ConfigError';
  }

  static fromZod(error: z.ZodError): ConfigError {
    return new ConfigError(
      error.issues.map((issue) => ({ setting: String(issue.path[0] ?? '(settings)'), message: issue.message })),
    );
  }
}

/** Parses env with a schema; throws ConfigError naming each bad setting. */
export function parseSettings<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.output<S> {
  // Empty strings count as "not set", so `FOO=` in a .env file means "use the default".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) throw ConfigError.fromZod(result.error);
  return result.data;
}

/**
 * Loads settings at process start; on failure prints the message (never a stack trace) and exits 1.
 * Every entry point calls this once, before anything else runs.
 */
export function loadOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
