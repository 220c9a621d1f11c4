import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { errorTable } from './api-errors';
import { API_KEY_AUTH } from './orders.docs';
import { REQUEST_SCHEMAS, RESPONSE_SCHEMAS, openApiSchemas } from './schemas';

export const DOCS_PATH = 'docs';
export const DOCS_JSON_PATH = 'docs/json';

const INTRODUCTION = `
Internal REST API of cardpull, the gift-card pull orchestrator. Internal e-commerce systems order gift
cards here; a worker pulls them from the partner. Postgres holds every order, so an accepted order is
never lost: it completes, fails with the partner's reason, or is parked as \`needs_attention\`.

**Authentication**: \`Authorization: Bearer <API key>\` (API_KEYS). Scopes: \`orders:write\`,
\`orders:read\`, \`cards:read\` (without it, card codes and PINs are masked).

**Idempotency**: \`POST /v1/orders\` needs an \`Idempotency-Key\`. Send the same key and body again after a
timeout: you get the same order (200), never a second card.

**Errors** answer \`{ "errors": [{ "code", "message" }], "status" }\`: act on \`code\`.

${errorTable()}

**Operations** (no API key, internal network only): \`GET /health/live\`, \`GET /health/ready\` (Postgres and
Redis; the partner is reported but never fails readiness), \`GET /metrics\` (Prometheus, \`cardpull_*\`).
This document: \`/docs\` (UI) and \`/docs/json\`.
`.trim();

/** The OpenAPI 3.0 document of the app: routes and decorators from the controllers, schemas from zod. */
export function buildApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('cardpull internal API')
    .setVersion('v1')
    .setDescription(INTRODUCTION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'API key', description: 'An API key of API_KEYS' }, API_KEY_AUTH)
    .build();
  config.components = {
    ...config.components,
    schemas: { ...openApiSchemas(RESPONSE_SCHEMAS, 'output'), ...openApiSchemas(REQUEST_SCHEMAS, 'input') },
  };
  const document = SwaggerModule.createDocument(app, config);
  // The operations page (/admin) is HTML for people, with cookie sessions: not part of this contract.
  for (const path of Object.keys(document.paths)) if (/^\/admin(\/|$)/.test(path)) delete document.paths[path];
  return document;
}

/**
 * Serves the document at /docs (Swagger UI) and /docs/json, without an API key (it holds no secret).
 * Call before `listen` (Fastify takes no route once listening).
 */
export function setupApiDocs(app: INestApplication): OpenAPIObject {
  const document = buildApiDocument(app);
  SwaggerModule.setup(DOCS_PATH, app, document, { jsonDocumentUrl: DOCS_JSON_PATH, raw: ['json'], customSiteTitle: 'cardpull API' });
  return document;
}
