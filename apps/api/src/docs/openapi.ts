import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AdminLogin } from '../admin/auth/admin-login.service';
import { ApiError, ApiKeyCheck, bearerKey, envelope, isUnder } from '@cardpull/platform';
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
\`orders:read\`, \`cards:read\` (without it, card codes and PINs are masked), \`statements:read\` (your daily statements),
\`subscriptions:write\` (subscribe to \`catalog.changed\`).

**Idempotency**: \`POST /v1/orders\` needs an \`Idempotency-Key\`. Send the same key and body again after a
timeout: you get the same order (200), never a second card.

**Errors** answer \`{ "errors": [{ "code", "message" }], "status" }\`: act on \`code\`.

${errorTable()}

**Operations**: \`GET /health/live\`, \`GET /health/ready\` (no authentication; Postgres and Redis; the
partner is reported but never fails readiness), \`GET /metrics\` (Prometheus, \`cardpull_*\`; an API key
with the scope \`metrics:read\`). This document: \`/docs\` (UI) and \`/docs/json\`, for any API key (Bearer)
or an operator of ADMIN_USERS (HTTP Basic, so a browser asks for it).
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
 * Serves the document at /docs (Swagger UI) and /docs/json, for a caller with any API key (Bearer, through
 * the same throttled check as every other route taking a key) or an operator of ADMIN_USERS (HTTP Basic,
 * throttled like the login form): every route but health needs authentication. The hook matches the route
 * Fastify chose and the decoded, normalised path, so no spelling of /docs (`/%64ocs/json`) slips past.
 * Call before `listen` (Fastify takes no route once listening).
 */
export function setupApiDocs(app: INestApplication): OpenAPIObject {
  const keys = app.get(ApiKeyCheck);
  // The operators' login checks (async scrypt, the same throttling as the login form).
  const login = app.get(AdminLogin);
  const allowed = async (authorization: unknown, address: string): Promise<boolean | 'throttled'> => {
    if (bearerKey(authorization)) {
      // Throws 401 or 429 (an unknown key counts as a failed authentication of the address).
      await keys.client(authorization, address);
      return true;
    }
    const basic = typeof authorization === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization) : null;
    if (!basic) return false;
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) return false;
    const result = await login.check(address, decoded.slice(0, colon).slice(0, 64), decoded.slice(colon + 1).slice(0, 1024));
    return result.ok ? true : result.reason === 'throttled' ? 'throttled' : false;
  };
  (app as NestFastifyApplication).getHttpAdapter().getInstance().addHook('onRequest', async (request, reply) => {
    if (!isUnder(request.routeOptions.url ?? '', `/${DOCS_PATH}`) && !isUnder(request.url, `/${DOCS_PATH}`)) return;
    let verdict: boolean | 'throttled';
    try {
      verdict = await allowed(request.headers.authorization, request.ip);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      await reply.status(error.getStatus()).send(error.getResponse());
      return;
    }
    if (verdict === true) return;
    if (verdict === 'throttled') {
      await reply.status(429).header('retry-after', '900').send(envelope(429, 'too_many_attempts', 'Too many failed logins from this address; try again in a few minutes'));
      return;
    }
    await reply
      .status(401)
      .header('www-authenticate', 'Basic realm="cardpull API docs", charset="UTF-8"')
      .send(envelope(401, 'unauthorized', 'The API documentation needs an API key (Bearer) or an operator login (Basic)'));
  });
  const document = buildApiDocument(app);
  SwaggerModule.setup(DOCS_PATH, app, document, { jsonDocumentUrl: DOCS_JSON_PATH, raw: ['json'], customSiteTitle: 'cardpull API' });
  return document;
}
