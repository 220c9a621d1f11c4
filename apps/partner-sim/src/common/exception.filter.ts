import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { envelope, PartnerError, statusName } from './partner-error';

/**
 * Every error leaves in the partner's envelope `{ errors: [{ code, message }], status }`: the spec's codes for
 * its table; for the rest (unknown route, body too large, a bug) the status name doubles as the code.
 */
@Catch()
export class SimExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(SimExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (reply.sent) return;
    if (exception instanceof PartnerError) {
      const answer = exception.toAnswer();
      void reply.code(answer.status).headers(answer.headers ?? {}).send(answer.body);
      return;
    }
    const status = httpStatusOf(exception);
    if (status >= 500) this.logger.error(`unhandled error: ${(exception as Error)?.stack ?? String(exception)}`);
    const message = status >= 500 ? 'Internal error' : (exception as Error).message;
    void reply.code(status).send(envelope(status, statusName(status), message));
  }
}

function httpStatusOf(exception: unknown): number {
  if (exception instanceof HttpException) return exception.getStatus();
  // Fastify's own errors (body too large, bad content length) carry their status.
  const status = (exception as { statusCode?: unknown })?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
}
