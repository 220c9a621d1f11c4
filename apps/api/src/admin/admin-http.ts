import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiError } from '@cardpull/platform';
import type { AdminRequest, AdminSession } from './auth/admin-sessions.service';
import type { Html } from './views/html';
import { CONTENT_SECURITY_POLICY } from './views/layout';

/** Sends a rendered page: HTML, no script allowed, never cached (the guard hook sets no-store). */
export function sendPage(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('content-security-policy', CONTENT_SECURITY_POLICY).send(body.value);
}

/** The session the guard hook attached (every route but the login page has one). */
export const Session = createParamDecorator((_data: unknown, ctx: ExecutionContext): AdminSession => {
  const session = ctx.switchToHttp().getRequest<AdminRequest>().adminSession;
  if (!session) throw new ApiError(401, 'unauthorized', 'Log in at /admin/login first');
  return session;
});

/** One text field of a posted form (a repeated or missing field reads as empty). */
export function field(body: unknown, name: string): string {
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}
