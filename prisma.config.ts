import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (`prisma migrate deploy`, `prisma generate`) where its native engine is available.
// Offline, scripts/prisma-wasm.mjs does the same work through @prisma/schema-engine-wasm.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/cardpull' },
});
