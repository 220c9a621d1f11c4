import type { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { createFastifyAdapter } from '@cardpull/logger';
import { EnvelopeExceptionFilter } from './error-handling';

export interface HttpAppOptions {
  bodyLimit?: number;
  /** TRUSTED_PROXIES: whose X-Forwarded-* headers are believed (none: they are ignored). */
  trustedProxies?: readonly string[];
}

/**
 * A Nest app on Fastify with the project's conventions: pino logs with correlation ids, errors in the
 * envelope (also Fastify's own), graceful shutdown on SIGTERM/SIGINT. Not listening yet.
 */
export async function createHttpApp(module: Type | DynamicModule, opts: HttpAppOptions = {}): Promise<NestFastifyApplication> {
  const adapter = createFastifyAdapter({ bodyLimit: opts.bodyLimit, trustProxy: opts.trustedProxies?.length ? [...opts.trustedProxies] : false });
  // A caller that half-closes after its request (sends its FIN, still reading) gets its answer: Node's
  // default ends the socket at the FIN, so an answer that waits on I/O (the key check asks Redis) was lost.
  // The socket ends once the answer is written. (The partner simulator keeps the default: there a FIN is
  // a client giving up on a held answer, which its ledger records.)
  (adapter.getInstance().server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, { bufferLogs: true, abortOnError: false });
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new EnvelopeExceptionFilter());
  // Exit 0 once shut down (Nest would otherwise re-raise the signal, and the last log lines may be lost).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
  return app;
}
