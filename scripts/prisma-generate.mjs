#!/usr/bin/env node
// Generates the Prisma client (libs/db/src/generated) from prisma/schema.prisma.
//
// `prisma generate` itself needs no engine, but Prisma 7's CLI insists on locating (or downloading) the
// native schema engine first. Where that download is impossible (an offline CI, this project's build
// machine), pointing PRISMA_SCHEMA_ENGINE_BINARY at any existing file lets generate run; it is not executed.
// Where the variable is already set, or PRISMA_ALLOW_ENGINE_DOWNLOAD=1, the CLI behaves as usual.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'node_modules', 'prisma', 'build', 'index.js');
if (!existsSync(cli)) {
  console.error('prisma-generate: node_modules/prisma is missing; run `npm ci` first.');
  process.exit(1);
}
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY && env.PRISMA_ALLOW_ENGINE_DOWNLOAD !== '1') {
  env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
}
const result = spawnSync(process.execPath, [cli, 'generate', '--schema', join(root, 'prisma', 'schema.prisma')], {
  cwd: root,
  env,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
