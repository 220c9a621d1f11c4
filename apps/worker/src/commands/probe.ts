import { probeCommand } from '../probe/probe-command';

// npm run probe: see PROBE_USAGE (apps/worker/src/probe/probe-command.ts) and docs/operations.md,
// "Pointing cardpull at a new partner environment".
probeCommand(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`probe failed: ${error.message}\n`);
    process.exit(1);
  },
);
