import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiError } from '@cardpull/platform';
import { field, sendPage, Session } from '../admin-http';
import { loginView } from '../views/login.view';
import { LOGIN_PATH, crossSite, safeNext } from './admin-guard';
import { AdminLogin } from './admin-login.service';
import { RevokedSessionsRepository } from './revoked-sessions.repository';
import { AdminSessions, type AdminRequest, type AdminSession } from './admin-sessions.service';

/** Logging in and out of the operations surface (ADMIN_USERS; API keys never open it). */
@ApiExcludeController() // HTML for people, with cookie sessions: not part of the /v1 contract
@Controller('admin')
export class AdminAuthController {
  constructor(
    private readonly login: AdminLogin,
    private readonly sessions: AdminSessions,
    private readonly revoked: RevokedSessionsRepository,
  ) {}

  @Get('login')
  form(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Query('next') next: unknown) {
    if (req.adminSession) return reply.redirect(safeNext(next), 303);
    return sendPage(reply, loginView({ next: safeNext(next) }));
  }

  @Post('login')
  async submit(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    // Login CSRF: another site must not log a browser into an account of its choosing.
    if (crossSite(req)) throw new ApiError(403, 'cross_site_request', 'Log in from the login page itself');
    const user = field(body, 'user').slice(0, 64);
    const next = safeNext(field(body, 'next'));
    const result = await this.login.check(req.ip, user, field(body, 'password').slice(0, 1024));
    if (!result.ok) {
      const throttled = result.reason === 'throttled';
      const error = throttled ? 'Too many failed attempts; try again in a few minutes.' : 'Wrong user name or password.';
      return sendPage(reply, loginView({ next, user, error }), throttled ? 429 : 401);
    }
    this.sessions.setSessionCookie(req, reply, this.sessions.issue(result.user).cookie);
    return reply.redirect(next, 303);
  }

  @Post('logout')
  async logout(@Req() req: AdminRequest, @Res() reply: FastifyReply, @Session() session: AdminSession, @Body() body: unknown) {
    if (!this.sessions.csrfValid(session, field(body, 'csrf'))) throw new ApiError(403, 'csrf_token_invalid', 'Missing or wrong CSRF token: reload the page and try again');
    // Ended on the server too: a copy of the cookie is refused from now on.
    await this.revoked.revoke(session.id, session.expiresAt);
    this.sessions.clearSessionCookie(req, reply);
    return reply.redirect(LOGIN_PATH, 303);
  }
}
