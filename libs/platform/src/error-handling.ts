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
    if (httpStatus >= 500) this.log.error({ err: exception }, 'unhandled error');
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
    return { httpStatus: 500, body: envelope(500, 'internal_error', 'Internal error; see the service log for this correlation id') };
  }
}
