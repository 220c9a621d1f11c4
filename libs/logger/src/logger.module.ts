import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { LoggerModule as PinoLoggerModule } from 'nestjs-pino';
import pino from 'pino';
import { lazyChildren } from './lazy-child';
import { REDACTED, REDACT_PATHS } from './redaction';

export const CORRELATION_HEADER = 'x-correlation-id';

export interface LoggerOptions {
  /** Process name written on every line (api, worker, partner-sim). */
  name: string;
  level: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read what was logged. */
  stream?: pino.DestinationStream;
}

/** The pino options shared by Nest apps and plain scripts: JSON lines, ISO time, redaction. */
export function pinoOptions(opts: LoggerOptions): pino.LoggerOptions {
  return {
    name: opts.name,
    level: opts.level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
}

/** A logger for code outside Nest (scripts, the start-up checks), with the same redaction. */
export function createLogger(opts: LoggerOptions): pino.Logger {
  return pino(pinoOptions(opts), opts.stream ?? pino.destination({ sync: true }));
}

const validCorrelationId = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Requests Node's HTTP parser refuses before any route sees them (control characters in a header,
 * conflicting lengths, headers over the limit) are answered in our error envelope too, as Fastify's
 * default handler does in its own format.
 */
function envelopeClientError(err: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'request_timeout', 'The request took too long to arrive']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large']
        : [400, 'Bad Request', 'malformed_request', 'The request is not valid HTTP (bad header characters or lengths)'];
  const body = JSON.stringify({ errors: [{ code, message }], status: text.toLowerCase().replace(/ /g, '_') });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

function correlationIdOf(req: IncomingMessage): string {
  const incoming = req.headers[CORRELATION_HEADER];
  return typeof incoming === 'string' && validCorrelationId.test(incoming) ? incoming : randomUUID();
}

/**
 * The Fastify adapter every HTTP app uses: Fastify's request id is the correlation id (the caller's
 * X-Correlation-Id when well-formed, else a UUID), echoed in the response; pino-http reuses it.
 */
export function createFastifyAdapter(options: { bodyLimit?: number; trustProxy?: boolean | string[] } = {}): FastifyAdapter {
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimit ?? 64 * 1024,
    trustProxy: options.trustProxy ?? false,
    requestIdHeader: false,
    genReqId: correlationIdOf,
    clientErrorHandler: envelopeClientError,
  });
  adapter.getInstance().addHook('onRequest', async (request, reply) => {
    reply.header(CORRELATION_HEADER, request.id);
  });
  return adapter;
}

@Module({})
export class LoggerModule {
  /**
   * nestjs-pino with one correlation id per HTTP request: taken from the caller's X-Correlation-Id when
   * it is well-formed, otherwise a new UUID, and echoed in the response header. Jobs get theirs from
   * `runInJobContext`.
   */
  static forRoot(opts: LoggerOptions): DynamicModule {
    // The process's root logger, whose children (two per request, one per job) cost nothing until they write.
    const root = lazyChildren(opts.stream ? pino(pinoOptions(opts), opts.stream) : pino(pinoOptions(opts)));
    return PinoLoggerModule.forRoot({
      // Fields a handler assigns (PinoLogger.assign: the order's trace id) are on its request's last line too.
      assignResponse: true,
      pinoHttp: {
        logger: root,
        // Behind createFastifyAdapter the request already carries its id; this covers other adapters.
        genReqId: (req: IncomingMessage, res: ServerResponse) => {
          const id = correlationIdOf(req);
          res.setHeader(CORRELATION_HEADER, id);
          return id;
        },
        customProps: (req: IncomingMessage) => ({ correlationId: (req as IncomingMessage & { id?: unknown }).id }),
        // 'silent' below the level written: pino-http then skips the line's work altogether.
        customLogLevel: (_req, res, err) => {
          const level = err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
          return root.isLevelEnabled(level) ? level : 'silent';
        },
        // Health probes and metrics scrapes would drown everything else.
        autoLogging: { ignore: (req) => /^\/(health|metrics)/.test(req.url ?? '') },
        serializers: {
          req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
      },
      // On Fastify, the default route only matches "/" after @fastify/middie's rewrite: request logs and context would vanish.
      forRoutes: [{ path: '*splat', method: RequestMethod.ALL }],
    }) as DynamicModule;
  }
}
