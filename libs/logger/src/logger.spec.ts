import { Controller, Get, Logger as NestLogger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger, PinoLogger } from 'nestjs-pino';
import { LogCapture } from '@cardpull/testing';
import pino from 'pino';
import { CORRELATION_HEADER, LoggerModule, createFastifyAdapter, createLogger, lazyChildren, pinoOptions, runInJobContext } from './index';

const CARD = { id: 'c-1', code: 'CARDCODE-SECRET-0001', pin_code: '987654', amount: 1000 };
const SHARED_KEY = '00112233445566778899aabbccddeeff';

describe('invariant 7: card codes, PINs and partner credentials never reach the log output', () => {
  it('redacts a card, wherever it sits in a logged object', () => {
    const capture = new LogCapture();
    const log = createLogger({ name: 'test', level: 'debug', stream: capture });
    log.info({ card: CARD }, 'a card at the top');
    log.info({ order: { card: CARD } }, 'a card in an order');
    log.info({ result: { value: { card: CARD } } }, 'a card two levels down');
    log.info({ cards: [CARD] }, 'a list of cards');
    log.info({ pin_code: CARD.pin_code, nested: { pin_code: CARD.pin_code } }, 'a PIN');
    expect(capture.lines).toHaveLength(5);
    expect(capture.text).not.toContain(CARD.code);
    expect(capture.text).not.toContain(CARD.pin_code);
    expect(capture.text).toContain('[redacted]');
  });

  it('redacts the Authorization header, signatures and shared keys', () => {
    const capture = new LogCapture();
    const log = createLogger({ name: 'test', level: 'debug', stream: capture });
    const authorization = `Bearer k, Id=i, Signature=deadbeefcafe, Timestamp=1`;
    log.info({ req: { headers: { authorization } } }, 'request');
    log.info({ headers: { authorization } }, 'headers');
    log.info({ signature: 'deadbeefcafe', sharedKey: SHARED_KEY, config: { sharedKeyHex: SHARED_KEY } }, 'secrets');
    expect(capture.text).not.toContain('deadbeefcafe');
    expect(capture.text).not.toContain(SHARED_KEY);
  });
});

@Controller()
class ProbeController {
  private readonly log = new NestLogger(ProbeController.name);
  @Get('/probe')
  probe() {
    this.log.log({ card: CARD }, 'handled a card');
    return { ok: true };
  }
}

@Module({ imports: [], controllers: [ProbeController] })
class ProbeModule {}

describe('correlation ids: one per HTTP request and per job, on every line', () => {
  let app: NestFastifyApplication;
  const capture = new LogCapture();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [LoggerModule.forRoot({ name: 'api', level: 'info', stream: capture }), ProbeModule],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(createFastifyAdapter(), { bufferLogs: true });
    app.useLogger(app.get(Logger));
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(() => app.close());

  it('echoes a well-formed X-Correlation-Id and writes it on the request lines; the header is redacted', async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/probe',
      headers: { [CORRELATION_HEADER]: 'checkout-42', authorization: 'Bearer topsecret-key-1' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers[CORRELATION_HEADER]).toBe('checkout-42');
    const lines = capture.json().filter((l) => l.correlationId === 'checkout-42');
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['handled a card', 'request completed']));
    expect(capture.text).not.toContain('topsecret-key-1');
    expect(capture.text).not.toContain(CARD.code);
  });

  it('generates one when the caller sends none or a malformed one', async () => {
    const res = await app.inject({ method: 'GET', url: '/probe', headers: { [CORRELATION_HEADER]: 'bad id with spaces' } });
    expect(res.headers[CORRELATION_HEADER]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a job handler logs with the job id as correlation id and the order id', async () => {
    const logger = await app.resolve(PinoLogger);
    await runInJobContext(logger, { id: 'job-7', name: 'sync_call', data: { orderId: 'order-9' } }, async () => {
      logger.info('inside the job');
    });
    const line = capture.json().find((l) => l.msg === 'inside the job');
    expect(line).toMatchObject({ correlationId: 'job-7', orderId: 'order-9', job: 'sync_call' });
  });
});

describe('lazy children (issue 22): a child logger serializes and redacts its bindings only once a line is written through it', () => {
  const made = () => {
    const capture = new LogCapture();
    const seen = { req: 0 };
    const root = lazyChildren(
      pino({ ...pinoOptions({ name: 'test', level: 'info' }), serializers: { req: (r: { id: string; url: string }) => (seen.req++, { id: r.id, url: r.url }) } }, capture),
    );
    return { capture, seen, root };
  };

  it('children that write nothing (a request below the level) never serialize their bindings', () => {
    const { capture, seen, root } = made();
    for (let i = 0; i < 10; i++) root.child({ req: { id: `r${i}`, url: '/v1/orders' } }).child({ correlationId: `r${i}` }).debug('below the level');
    expect(seen.req).toBe(0);
    expect(capture.lines).toHaveLength(0);
  });

  it('a line written through a grandchild carries every binding, in order, serialized once, with the redaction applied', () => {
    const { capture, seen, root } = made();
    const child = root.child({ req: { id: 'r1', url: '/v1/orders' }, headers: { authorization: 'Bearer topsecret-key-1' } });
    const grandchild = child.child({ correlationId: 'r1' });
    grandchild.info({ card: CARD }, 'handled');
    grandchild.warn('again');
    child.info('the child itself');
    expect(seen.req).toBe(1);
    expect(capture.json()).toEqual([
      expect.objectContaining({ req: { id: 'r1', url: '/v1/orders' }, correlationId: 'r1', msg: 'handled', card: expect.objectContaining({ code: '[redacted]' }) }),
      expect.objectContaining({ correlationId: 'r1', msg: 'again' }),
      expect.not.objectContaining({ correlationId: 'r1' }),
    ]);
    expect(capture.text).not.toContain('topsecret-key-1');
    expect(capture.text).not.toContain(CARD.code);
    expect(capture.text.indexOf('"req"')).toBeLessThan(capture.text.indexOf('"correlationId"'));
  });

  it('bindings are taken when the child is made, and setBindings and bindings() work as pino\'s own', () => {
    const { capture, root } = made();
    const fields: Record<string, unknown> = { orderId: 'o-1' };
    const child = root.child(fields);
    fields.orderId = 'changed later';
    expect(child.bindings()).toEqual({ orderId: 'o-1', name: 'test' });
    child.setBindings({ step: 'sync_call' });
    child.info('after setBindings');
    expect(capture.json()[0]).toMatchObject({ orderId: 'o-1', step: 'sync_call' });
  });
});
