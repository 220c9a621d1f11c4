#!/usr/bin/env node
// `npm test`: every test. Checks the import directions (floors.json, scripts/check-imports.mjs), type-checks the whole repository, builds the three apps, then runs jest, whose global setup checks that
// Postgres and Redis answer (saying how to start them if not) and migrates a fresh test database.
// Extra arguments go to jest: `npm test -- test/orders`.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APPS, writeStamp } from './source-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (args, label) => {
  const started = Date.now();
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (r.status !== 0) {
    console.error(`\n${label} failed (exit ${r.status ?? r.signal}).`);
    process.exit(r.status ?? 1);
  }
  console.log(`${label}: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
};

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(`Node ${process.versions.node} runs this; cardpull needs Node 24 (npm ci installs it: run through npm).`);
  process.exit(1);
}
run([join(root, 'scripts', 'check-imports.mjs')], 'imports');
run([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit'], 'typecheck');
// The crash and chaos suites run the built worker, API and simulator as real processes.
for (const app of APPS) {
  run([join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build', app], `build ${app}`);
}
// `npm start` after `npm test` need not build again.
writeStamp(root);
run(['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...process.argv.slice(2)], 'tests');
