import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '@cardpull/platform';
import { ApiModule } from '../../apps/api/src/api.module';
import { API_ERRORS } from '../../apps/api/src/docs/api-errors';
import { setupApiDocs } from '../../apps/api/src/docs/openapi';
import { REQUEST_SCHEMAS, errorEnvelopeSchema, openApiSchemas, orderListSchema, orderResponseSchema } from '../../apps/api/src/docs/schemas';
import { KEYS, idemKey, startStack, type Stack } from '../support/stack';
import { get, urlOf } from './support';

/** Any API key may read the API documentation. */
const READER = `Bearer ${KEYS.readOnly}`;

const ROOT = join(__dirname, '..', '..');

/**
 * The API as apps/api/src/main.ts builds it (createHttpApp, then setupApiDocs before listen), on the
 * stack's Postgres, Redis, simulator and worker. startStack's own API has no /docs: main.ts adds them.
 */
async function startDocumentedApi(stack: Stack): Promise<NestFastifyApplication> {
  const app = await createHttpApp(ApiModule.forConfig(stack.config, stack.logs), { bodyLimit: 16 * 1024 });
  setupApiDocs(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  stack.apiUrl = urlOf(app);
  return app;
}

type Doc = any;

/** (status, code) of every error example of every operation of the document. */
function documentedErrors(doc: Doc): Set<string> {
  const pairs = new Set<string>();
  for (const pathItem of Object.values<any>(doc.paths)) {
    for (const op of Object.values<any>(pathItem)) {
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        for (const example of Object.values<any>(response.content?.['application/json']?.examples ?? {})) {
          const code = example.value?.errors?.[0]?.code;
          if (code) pairs.add(`${status} ${code}`);
        }
      }
    }
  }
  return pairs;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * Out of scope of this document: the operations page under /admin (HTML forms and cookie sessions for
 * people, removed from the document by buildApiDocument), whose refusals have codes of their own.
 */
const NOT_THE_INTERNAL_API = [join(ROOT, 'apps', 'api', 'src', 'admin')];

/** Every `new ApiError(<status>, '<code>'` and `envelope(<status>, '<code>'` of the sources the API runs. */
function errorsInSources(): { status: number; code: string; where: string }[] {
  const files = [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs', 'platform', 'src'))].filter(
    (f) => !NOT_THE_INTERNAL_API.some((dir) => f.startsWith(dir + '/')),
  );
  const found: { status: number; code: string; where: string }[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/new ApiError\(\s*(\d{3})\s*,\s*'([a-z0-9_]+)'/g)) found.push({ status: Number(m[1]), code: m[2]!, where: relative(ROOT, file) });
    if (file.includes(join('libs', 'platform'))) {
      for (const m of text.matchAll(/envelope\(\s*(\d{3})\s*,\s*'([a-z0-9_]+)'/g)) found.push({ status: Number(m[1]), code: m[2]!, where: relative(ROOT, file) });
    }
  }
  return found;
}

describe('OpenAPI at /docs and /docs/json is generated from the real routes and zod schemas, and the Order schema matches real answers', () => {
  let stack: Stack;
  let api: NestFastifyApplication | undefined;
  let doc: Doc;
  beforeAll(async () => {
    stack = await startStack({ api: false });
    api = await startDocumentedApi(stack);
    doc = (await get(`${stack.apiUrl}/docs/json`, READER)).body;
  });
  afterAll(async () => {
    await api?.close();
    await stack?.close();
  });

  it('serves the Swagger UI at /docs and the OpenAPI 3.0 document at /docs/json, to an API key or an operator', async () => {
    const ui = await get(`${stack.apiUrl}/docs`, `Basic ${Buffer.from('admin:admin').toString('base64')}`);
    expect(ui.status).toBe(200);
    expect(ui.headers['content-type']).toMatch(/text\/html/);
    expect(ui.text).toContain('swagger-ui');
    for (const path of ['/docs', '/docs/json']) {
      const refused = await get(`${stack.apiUrl}${path}`);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^Basic /);
      expect((await get(`${stack.apiUrl}${path}`, 'Bearer not-a-key-123')).status).toBe(401);
      expect((await get(`${stack.apiUrl}${path}`, `Basic ${Buffer.from('admin:wrong').toString('base64')}`)).status).toBe(401);
    }
    const json = await get(`${stack.apiUrl}/docs/json`, READER);
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/application\/json/);
    expect(doc.openapi).toBe('3.0.0');
    expect(doc.info.title).toBe('cardpull internal API');
  });

  it('documents the order and catalog endpoints, bearer auth, the Idempotency-Key header and the wait query; no /admin route', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(
      ['/health/live', '/health/ready', '/metrics', '/v1/balance', '/v1/gift-cards', '/v1/gift-cards/{code}', '/v1/inventories/{code}', '/v1/orders', '/v1/orders/{id}', '/v1/orders/by-idempotency-key/{key}', '/v1/statements', '/v1/subscriptions', '/v1/subscriptions/{eventType}'].sort(),
    );
    expect(doc.components.securitySchemes['api-key']).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    const create = doc.paths['/v1/orders'].post;
    expect(create.security).toEqual([{ 'api-key': [] }]);
    expect(create.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
        expect.objectContaining({ name: 'wait', in: 'query', required: false, schema: expect.objectContaining({ minimum: 0, maximum: 30 }) }),
      ]),
    );
    expect(doc.paths['/v1/orders/{id}'].get.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'wait', in: 'query' })]));
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateOrderRequest' });
    expect(create.responses['202'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/OrderResponse' });
    expect(create.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/OrderResponse' });
    expect(doc.paths['/v1/orders'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/OrderList' });
    for (const path of ['/health/live', '/health/ready']) {
      expect(doc.paths[path].get.security).toBeUndefined();
    }
  });

  it('the request body schema is createOrderSchema through z.toJSONSchema (openapi-3.0), and the examples are valid', () => {
    const schemas = doc.components.schemas;
    expect(schemas.CreateOrderRequest).toEqual(openApiSchemas(REQUEST_SCHEMAS, 'input').CreateOrderRequest);
    expect(schemas.CreateOrderRequest).toEqual(
      expect.objectContaining({ additionalProperties: false, required: ['gift_card_code', 'amount'], example: expect.any(Object) }),
    );
    expect(REQUEST_SCHEMAS.CreateOrderRequest.safeParse(schemas.CreateOrderRequest.example).success).toBe(true);
    for (const example of Object.values<any>(doc.paths['/v1/orders'].post.requestBody.content['application/json'].examples)) {
      expect(REQUEST_SCHEMAS.CreateOrderRequest.safeParse(example.value).success).toBe(true);
    }
    for (const name of ['Order', 'OrderResponse', 'OrderList', 'ErrorEnvelope', 'BalanceResponse', 'GiftCardList', 'InventoryResponse']) {
      expect([name, schemas[name]?.type]).toEqual([name, 'object']);
    }
    expect(schemas.Order.required).toEqual(expect.arrayContaining(['id', 'status', 'attempts', 'card', 'error', 'completed_at']));
    // Every example of an order or error answer in the document is valid against the schema it names.
    const validators: Record<string, { safeParse(v: unknown): { success: boolean } }> = {
      '#/components/schemas/OrderResponse': orderResponseSchema,
      '#/components/schemas/OrderList': orderListSchema,
      '#/components/schemas/ErrorEnvelope': errorEnvelopeSchema,
    };
    let checked = 0;
    for (const pathItem of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(pathItem)) {
        for (const response of Object.values<any>(op.responses)) {
          const media = response.content?.['application/json'];
          const validator = validators[media?.schema?.$ref];
          if (!validator) continue;
          for (const example of Object.values<any>(media.examples ?? {})) {
            expect([media.schema.$ref, example.summary, validator.safeParse(example.value).success]).toEqual([media.schema.$ref, example.summary, true]);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('the Order schema matches real answers: accepted (pending), completed with its card, masked without cards:read, a page, an error', async () => {
    const accepted = await stack.call('POST', '/v1/orders', {
      body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500, mode: 'async', metadata: { cart_id: 'c-1' } },
      headers: { 'idempotency-key': idemKey() },
    });
    expect(accepted.status).toBe(202);
    expect(orderResponseSchema.parse(accepted.body).order.status).toBe('pending');

    const completed = await stack.call('POST', '/v1/orders?wait=20', { body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 2500 }, headers: { 'idempotency-key': idemKey() } });
    const order = orderResponseSchema.parse(completed.body).order;
    expect(order.status).toBe('completed');
    expect(order.card).toEqual(expect.objectContaining({ code: expect.stringMatching(/^[A-Z0-9]{16}$/) }));

    const foreign = await stack.call('GET', `/v1/orders/${order.id}`, { key: KEYS.noCards });
    expect(foreign.status).toBe(404); // another client's order is not visible
    const own = await stack.call('POST', '/v1/orders?wait=20', { key: KEYS.noCards, body: { gift_card_code: 'ACME-BOOKS-FIXED', amount: 1000 }, headers: { 'idempotency-key': idemKey() } });
    expect(orderResponseSchema.parse(own.body).order.card?.code).toMatch(/^\*{12}[A-Z0-9]{4}$/);

    const page = await stack.call('GET', '/v1/orders?limit=1');
    expect(orderListSchema.parse(page.body).orders).toHaveLength(1);
    expect(errorEnvelopeSchema.parse(foreign.body).errors[0]!.code).toBe('order_not_found');
    expect(errorEnvelopeSchema.parse((await stack.call('POST', '/v1/orders', { body: '{', headers: { 'idempotency-key': idemKey() } })).body).errors[0]!.code).toBe('invalid_json');
  });
});

describe('every error code the internal API answers is documented with its HTTP status (the document cannot drift)', () => {
  let stack: Stack;
  let api: NestFastifyApplication | undefined;
  let doc: Doc;
  beforeAll(async () => {
    stack = await startStack({ api: false, worker: false });
    api = await startDocumentedApi(stack);
    doc = (await get(`${stack.apiUrl}/docs/json`, READER)).body;
  });
  afterAll(async () => {
    await api?.close();
    await stack?.close();
  });

  it('each `new ApiError(status, code` in apps/ and libs/platform, and each envelope(status, code) of the error filter, is an example of that status', () => {
    const inSources = errorsInSources();
    // Guard against a regex that silently finds nothing.
    expect(inSources.length).toBeGreaterThanOrEqual(25);
    for (const code of ['invalid_json', 'payload_too_large', 'unsupported_media_type', 'invalid_request', 'unauthorized', 'forbidden', 'order_not_found', 'idempotency_key_reused', 'invalid_amount', 'callback_not_configured', 'gift_card_not_found', 'partner_unavailable', 'internal_error']) {
      expect([code, inSources.some((e) => e.code === code)]).toEqual([code, true]);
    }
    const documented = documentedErrors(doc);
    const missing = inSources.filter((e) => !documented.has(`${e.status} ${e.code}`)).map((e) => `${e.status} ${e.code} (${e.where})`);
    expect(missing).toEqual([]);
  });

  it('each code has one status, and the introduction lists every code of the catalog', () => {
    for (const e of errorsInSources()) {
      const doc = API_ERRORS[e.code as keyof typeof API_ERRORS];
      expect([e.code, doc?.status]).toEqual([e.code, e.status]);
    }
    for (const [code, { status }] of Object.entries(API_ERRORS)) expect(doc.info.description).toContain(`| ${status} | \`${code}\` |`);
  });
});
