/**
 * `npm run openapi:write`: writes the API's OpenAPI document to libs/client/openapi.json, the file the
 * client library's types are generated from (scripts/openapi-types.mjs, run next by the same command).
 * The app is built in Nest's preview mode: its routes and decorators without any provider, so no database,
 * Redis or partner is needed. test/client/openapi-drift.e2e-spec.ts fails when the running API's
 * /docs/json and the committed file differ. `--out FILE` writes elsewhere (the test compares it).
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { loadServiceConfig } from '@cardpull/config';
import { ApiModule } from '../api.module';
import { buildApiDocument } from './openapi';

/** Where the document is committed, from the repository's root. */
export const OPENAPI_FILE = join('libs', 'client', 'openapi.json');

/** The document as the file holds it: two-space JSON and a final newline. */
export const documentText = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;

async function main(): Promise<void> {
  // Nothing is connected in preview mode: the settings only have to be valid.
  const config = loadServiceConfig({
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/unused',
    REDIS_URL: 'redis://127.0.0.1:6379',
    PARTNER_BASE_URL: 'http://127.0.0.1:9',
    API_KEYS: 'docs:docs-writer-key-0001',
    CARDPULL_PROFILE: 'local',
  });
  const app = await NestFactory.create(ApiModule.forConfig(config), new FastifyAdapter(), { preview: true, logger: false });
  try {
    const out = process.argv.indexOf('--out');
    const target = out > 0 && process.argv[out + 1] ? process.argv[out + 1]! : join(process.cwd(), OPENAPI_FILE);
    writeFileSync(target, documentText(buildApiDocument(app)));
    process.stdout.write(`wrote ${target}\n`);
  } finally {
    await app.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
