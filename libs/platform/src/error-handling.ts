import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyError, FastifyReply } from 'fastify';
import { ApiError, envelope, type ErrorBody } from './api-error';

/** Errors of Fastify's own body handling, answered in the envelope with a code a caller can act on. */
function fastifyErrorBody(error: FastifyError): { httpStatus: number; body: ErrorBody } | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { httpStatus: 415, body: envelope(415, 'unsupported_media_type', 'Content-Type must be application/json') };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { httpStatus: 413, body: envelope(413, 'payload_too_large', 'The request body is too large') };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { httpStatus: 400, body: envelope(400, 'invalid_json', 'The request body is empty') };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { httpStatus: 400, body: envelope(400, 'invalid_request', 'Content-Length does not match the body') };
    default:
      break;
  }
  if (error.statusCode === 400 && (error instanceof SyntaxError || /JSON|prototype|constructor/i.test(error.message))) {
    return { httpStatus: 400, body: envelope(400, 'invalid_json', 'The request body is not valid JSON') };
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { httpStatus: error.statusCode, body: envelope(error.statusCode, 'invalid_request', error.message) };
  }
  return null;
}

/** Seconds a caller is told to wait after a database_unavailable answer. */
const DATABASE_RETRY_AFTER_S = 1;

/**
 * The database could not be used at all for this request: no connection of the pool within its wait
 * (pg-pool's "timeout exceeded when trying to connect": every connection busy, the service overloaded), or
 * none could be opened (refused, reset while connecting, the server shutting down). No statement ran, so
 * nothing was done: the answer is a 503 the caller may retry (the client library does, with the same
 * Idempotency-Key), not a 500 that reads as our bug. Errors of a statement that did run stay 500s.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.message === 'timeout exceeded when trying to connect' || error.message === 'Connection terminated due to connection timeout') return true;
  const code = (error as { code?: unknown }).code;
  // 57P01-57P03: the server is shutting down or starting; ECONNREFUSED: nothing listens.
  return code === 'ECONNREFUSED' || code === '57P01' || code === '57P02' || code === '57P03';
}

/**
 * Every error leaves as the envelope, also Fastify's own (Nest routes them here); an unexpected one as a
 * 500 with no detail (the detail goes to the log with the request's correlation id).
 */
@Catch()
export class EnvelopeExceptionFilter implements ExceptionFilter {
  private readonly log = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { httpStatus, body } = this.toEnvelope(exception);
    if (isDatabaseUnavailable(exception)) {
      // An overload or an outage, not a bug: one line, no stack (the metrics and health show the rest).
      this.log.warn({ cause: (exception as Error).message }, 'database unavailable: answered 503');
      void reply.header('retry-after', String(DATABASE_RETRY_AFTER_S));
    } else if (exception instanceof ApiError && exception.retryAfterS !== undefined) {
      // An answer the API chose to give (catalog_unavailable): its own Retry-After, no stack.
      void reply.header('retry-after', String(exception.retryAfterS));
    } else if (httpStatus >= 500) this.log.error({ err: exception }, 'unhandled error');
    void reply.status(httpStatus).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  toEnvelope(exception: unknown): { httpStatus: number; body: ErrorBody } {
    if (exception instanceof ApiError) return { httpStatus: exception.getStatus(), body: exception.getResponse() as ErrorBody };
    // Nest wraps Fastify's own errors (body parsing: 400, 413, 415) in an HttpException with the cause.
    const cause = exception instanceof HttpException ? exception.cause : undefined;
    const fastifyCause = cause && typeof cause === 'object' && 'code' in cause ? fastifyErrorBody(cause as FastifyError) : null;
    if (fastifyCause) return fastifyCause;
    if (exception instanceof HttpException) {
      const httpStatus = exception.getStatus();
      const response = exception.getResponse();
      const message = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
      const code = httpStatus === 404 ? 'not_found' : httpStatus === 429 ? 'too_many_requests' : httpStatus >= 500 ? 'internal_error' : 'invalid_request';
      return { httpStatus, body: envelope(httpStatus, code, Array.isArray(message) ? message.join('; ') : String(message)) };
    }
    const fastify = exception && typeof exception === 'object' ? fastifyErrorBody(exception as FastifyError) : null;
    if (fastify) return fastify;
    if (isDatabaseUnavailable(exception)) {
      return { httpStatus: 503, body: envelope(503, 'database_unavailable', `The service is busy or its database cannot be reached (${(exception as Error).message}); nothing was done: try again in ${DATABASE_RETRY_AFTER_S} s`) };
    }
    return { httpStatus: 500, body: envelope(500, 'internal_error', 'Internal error; see the service log for this correlation id') };
  }
}
