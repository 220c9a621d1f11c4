import { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { envelope } from '@cardpull/platform';
import type { AdminRequest, AdminSessions } from './admin-sessions.service';
import type { RevokedSessionsRepository } from './revoked-sessions.repository';

export const ADMIN_HOME = '/admin';
export const LOGIN_PATH = '/admin/login';
export const BOARD_PATH = '/admin/queues';

const isAdminPath = (path: string): boolean => path === ADMIN_HOME || path.startsWith(`${ADMIN_HOME}/`);

function decodedPath(request: FastifyRequest): string {
  const path = request.url.split('?')[0] ?? '';
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * Whether a request is for the operations surface: by the route it matched (so a percent-encoded path
 * cannot slip past) and by its decoded path (so unknown /admin URLs are guarded too).
 */
export function isAdminRequest(request: FastifyRequest): boolean {
  return isAdminPath(request.routeOptions.url ?? '') || isAdminPath(decodedPath(request));
}

/** A place to come back to after logging in: only a path of the operations surface. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/admin(\/[A-Za-z0-9/_.:-]*)?(\?[A-Za-z0-9=&%_.:+-]*)?$/.test(next) && !next.includes('..') && !next.startsWith(LOGIN_PATH)
    ? next
    : ADMIN_HOME;
}

const wantsHtml = (request: FastifyRequest): boolean =>
  (request.method === 'GET' || request.method === 'HEAD') && /text\/html/i.test(request.headers.accept ?? '');

/** A call of the job dashboard's API that changes something (retry, clean, pause, ...). */
const isBoardAction = (request: FastifyRequest): boolean =>
  request.method !== 'GET' && request.method !== 'HEAD' && (request.routeOptions.url ?? decodedPath(request)).startsWith(`${BOARD_PATH}/api/`);

/** The browser says the call comes from another site (the dashboard's own calls are same-origin). */
export function crossSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.origin;
  if (!origin) return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

function refuse(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(envelope(status, code, message));
}

/**
 * Everything under /admin needs an admin session (ADMIN_USERS, never an API key): the operations page, its
 * actions, and the job dashboard with its API and assets. Only the login page is public. A Fastify hook on
 * the app instance, so it covers bull-board's routes as well as Nest's. Without a session, a browser
 * navigation is sent to the login page and anything else gets 401 in the envelope; viewers (and everyone
 * with ADMIN_READ_ONLY) get 403 for dashboard actions. Must be installed before the dashboard is mounted
 * (Fastify copies hooks into a plugin's context when it loads).
 */
export function installAdminGuard(instance: FastifyInstance, sessions: AdminSessions, revoked: RevokedSessionsRepository): void {
  instance.addHook('onRequest', async (request: AdminRequest, reply) => {
    if (!isAdminRequest(request)) return;
    void reply
      .header('cache-control', 'no-store')
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin');
    const signed = sessions.read(request);
    // A session ended by a logout is refused, in every API process (its cookie may have been copied).
    const session = signed && !(await revoked.isRevoked(signed.id)) ? signed : null;
    if (session) {
      request.adminSession = session;
      // Activity keeps the session alive (ADMIN_SESSION_IDLE_MS); the renewed cookie is sent at most once a minute.
      const renewed = sessions.renewed(session);
      if (renewed) sessions.setSessionCookie(request, reply, renewed);
    }
    if (request.routeOptions.url === LOGIN_PATH) return;
    if (!session) {
      if (wantsHtml(request)) return reply.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(safeNext(request.url))}`, 302);
      return refuse(reply, 401, 'unauthorized', `Log in at ${LOGIN_PATH} first (an admin session is required)`);
    }
    if (isBoardAction(request)) {
      if (!session.canAct) return refuse(reply, 403, 'read_only', 'Read-only: this user may look but not act');
      if (crossSite(request)) return refuse(reply, 403, 'cross_site_request', 'Dashboard actions must come from the dashboard itself');
    }
  });
}
