/**
 * `npm run chaos`: one chaos run with the settings of the environment (docs/CHAOS.md). Exit code 0 when
 * every check held, 1 on any violation, 2 when the run could not be carried out or a setting is wrong.
 */
import { runChaos } from './runner';
import { ChaosSettingsError, settingsFromEnv } from './settings';

/** `--redis cluster` (or `--redis=cluster`) stands for CHAOS_REDIS=cluster. */
function argvEnv(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--redis(?:=(.*))?$/.exec(argv[i]!);
    if (m) out.CHAOS_REDIS = m[1] ?? argv[++i] ?? '';
  }
  return out;
}

async function main(): Promise<number> {
  let settings;
  try {
    settings = settingsFromEnv({ ...process.env, ...argvEnv(process.argv.slice(2)) });
  } catch (error) {
    if (error instanceof ChaosSettingsError) {
      process.stderr.write(`${error.message}\n(see docs/CHAOS.md for every setting)\n`);
      return 2;
    }
    throw error;
  }
  const tty = process.stdout.isTTY;
  let progressShown = false;
  const log = (line: string) => {
    if (progressShown) process.stdout.write('\n');
    progressShown = false;
    process.stdout.write(`${line}\n`);
  };
  // On a terminal the progress line is rewritten in place; elsewhere (CI, a file) one line each time.
  const progress = (line: string) => {
    if (!tty) return log(line);
    process.stdout.write(`\r${line}\x1b[K`);
    progressShown = true;
  };
  const report = await runChaos(settings, { log, progress });
  if (report.error) return 2;
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(2);
  },
);
