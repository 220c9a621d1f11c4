import { Logger as NestLogger, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import type pino from 'pino';
import type { SimConfig } from '@cardpull/config';
import { createFastifyAdapter } from '@cardpull/logger';
import { registerBodyParser } from './common/body-parser';
import { SimExceptionFilter } from './common/exception.filter';
import { registerRequestHooks } from './common/request-hooks';
import { SimModule } from './sim.module';
import { SimStateService } from './state/sim-state.service';

/**
 * The simulator, built and initialised but not listening: main.ts listens on SIM_HOST:SIM_PORT, tests on
 * an ephemeral port (`app.listen({ port: 0, host: '127.0.0.1' })`).
 */
export async function createSimApp(
  config: SimConfig,
  opts: { logStream?: pino.DestinationStream } = {},
): Promise<NestFastifyApplication> {
  const silent = config.LOG_LEVEL === 'silent';
  const build = async () => {
    const app = await NestFactory.create<NestFastifyApplication>(SimModule.forRoot(config, opts), createFastifyAdapter(), {
      bodyParser: false,
      // A held (hang fault) or slow answer must not keep shutdown waiting.
      forceCloseConnections: true,
      // A start-up error (a bad SIM_FAULTS) is thrown to the caller, not turned into process.exit.
      abortOnError: false,
      ...(silent ? {} : { bufferLogs: true }),
    });
    if (!silent) app.useLogger(app.get(Logger));
    const fastify = app.getHttpAdapter().getInstance();
    registerRequestHooks(fastify, app.get(SimStateService));
    registerBodyParser(fastify);
    app.useGlobalFilters(new SimExceptionFilter());
    await app.init();
    return app;
  };
  return silent ? withoutNestStartupLogs(build) : build();
}

/**
 * Nest's logger is process-wide (Logger.overrideLogger), and so is nestjs-pino's (see sim.module.ts). A silent
 * simulator started in-process by a test must neither replace the logger of the app under test nor print
 * Nest's start-up lines: logging is off while it is built, then whatever logger was there is put back.
 */
async function withoutNestStartupLogs<T>(build: () => Promise<T>): Promise<T> {
  const previous = (NestLogger as unknown as { staticInstanceRef?: LoggerService }).staticInstanceRef;
  NestLogger.overrideLogger(false);
  try {
    return await build();
  } finally {
    if (previous) NestLogger.overrideLogger(previous);
  }
}
