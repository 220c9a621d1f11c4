import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SERVICE_CONFIG, type AdminUser, type ServiceConfig } from '@cardpull/config';

export const SESSION_COOKIE = 'cardpull_admin';
const FLASH_COOKIE = 'cardpull_flash';
/** Cookies of the operations surface never leave /admin (the /v1 API does not see them). */
const COOKIE_PATH = '/admin';

export type AdminRole = AdminUser['role'];

/** What the signed session cookie carries (no server-side store). */
interface SessionClaims {
  /** user name */
  u: string;
  r: AdminRole;
  /** expiry, ms since epoch */
  exp: number;
  /** last activity, ms since epoch: the session ends after ADMIN_SESSION_IDLE_MS without a request */
  seen: number;
  /** random per login: the CSRF token is derived from it */
  sid: string;
  /** binds the user's ADMIN_USERS entry: a new password or role there ends the user's sessions */
  k: string;
}

/** A valid session, as the hook attaches it to the request. */
export interface AdminSession {
  /** The session's id (random per login): what a logout revokes. */
  id: string;
  user: string;
  role: AdminRole;
  expiresAt: Date;
  /** An admin, and ADMIN_READ_ONLY is off: may re-drive, mark failed, and act in the job dashboard. */
  canAct: boolean;
  /** The hidden field every state-changing form carries. */
  csrfToken: string;
}

export interface Flash {
  kind: 'ok' | 'error';
  message: string;
}

export type AdminRequest = FastifyRequest & { adminSession?: AdminSession };

/** Minimal Cookie header parser (names and values as sent; ours are base64url). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Admin sessions: an HMAC-SHA256-signed cookie (ADMIN_SESSION_SECRET, or a random secret per process when
 * unset) carrying user, role, expiry (ADMIN_SESSION_TTL_MS) and last activity (a session idle for
 * ADMIN_SESSION_IDLE_MS ends; the guard renews it at most once a minute); HttpOnly, SameSite=Strict,
 * Path=/admin, Secure over TLS.
 * Every signature is bound to its purpose (session, csrf, flash), so one can never stand in for another.
 */
@Injectable()
export class AdminSessions {
  private readonly secret: Buffer;
  /** The verified claims behind each session object read or issued (for its renewal). */
  private readonly claims = new WeakMap<AdminSession, SessionClaims>();

  constructor(@Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'ADMIN_READ_ONLY' | 'ADMIN_SESSION_IDLE_MS' | 'ADMIN_SESSION_SECRET' | 'ADMIN_SESSION_TTL_MS' | 'ADMIN_USERS'>) {
    this.secret = config.ADMIN_SESSION_SECRET ? Buffer.from(config.ADMIN_SESSION_SECRET, 'utf8') : randomBytes(32);
  }

  /** A new session for a user whose password was just checked; `now` is a parameter for tests. */
  issue(user: AdminUser, now = Date.now()): { cookie: string; session: AdminSession } {
    const claims: SessionClaims = { u: user.name, r: user.role, exp: now + this.config.ADMIN_SESSION_TTL_MS, seen: now, sid: randomBytes(16).toString('base64url'), k: this.binding(user) };
    return { cookie: this.seal('session', claims), session: this.toSession(claims) };
  }

  /**
   * The session's cookie with its activity moved to `now`, or null when it was renewed less than a minute
   * ago (no new cookie on every request). Its expiry (ADMIN_SESSION_TTL_MS from login) never moves.
   */
  renewed(session: AdminSession, now = Date.now()): string | null {
    // The claims `read` verified for this session: the cookie is not parsed and checked a second time.
    const claims = this.claims.get(session);
    if (!claims || now - claims.seen < 60_000) return null;
    return this.seal('session', { ...claims, seen: now });
  }

  /** The request's session, or null (no cookie, bad signature, expired, user gone or changed). */
  read(request: { headers: { cookie?: string } }, now = Date.now()): AdminSession | null {
    const claims = this.open<SessionClaims>('session', readCookie(request.headers.cookie, SESSION_COOKIE));
    if (!claims || typeof claims.u !== 'string' || typeof claims.exp !== 'number' || typeof claims.seen !== 'number' || typeof claims.sid !== 'string') return null;
    if (claims.exp <= now || now - claims.seen > this.config.ADMIN_SESSION_IDLE_MS) return null;
    const user = this.config.ADMIN_USERS.find((u) => u.name === claims.u);
    if (!user || user.role !== claims.r || !safeEqual(this.binding(user), claims.k)) return null;
    return this.toSession(claims);
  }

  csrfValid(session: AdminSession, token: unknown): boolean {
    return typeof token === 'string' && safeEqual(session.csrfToken, token);
  }

  setSessionCookie(request: FastifyRequest, reply: FastifyReply, cookie: string): void {
    this.setCookie(request, reply, SESSION_COOKIE, cookie, this.config.ADMIN_SESSION_TTL_MS);
  }

  clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
    this.setCookie(request, reply, SESSION_COOKIE, '', 0);
  }

  /** A one-shot message for the page a POST redirects to (signed, so nobody can plant one). */
  setFlash(request: FastifyRequest, reply: FastifyReply, flash: Flash): void {
    this.setCookie(request, reply, FLASH_COOKIE, this.seal('flash', { ...flash, exp: Date.now() + 60_000 }), 60_000);
  }

  /** Reads and clears the flash message, if any. */
  takeFlash(request: FastifyRequest, reply: FastifyReply): Flash | null {
    const raw = readCookie(request.headers.cookie, FLASH_COOKIE);
    if (raw === undefined) return null;
    this.setCookie(request, reply, FLASH_COOKIE, '', 0);
    const flash = this.open<Flash & { exp: number }>('flash', raw);
    if (!flash || flash.exp <= Date.now() || (flash.kind !== 'ok' && flash.kind !== 'error') || typeof flash.message !== 'string') return null;
    return { kind: flash.kind, message: flash.message };
  }

  private toSession(claims: SessionClaims): AdminSession {
    const session: AdminSession = {
      id: claims.sid,
      user: claims.u,
      role: claims.r,
      expiresAt: new Date(claims.exp),
      canAct: claims.r === 'admin' && !this.config.ADMIN_READ_ONLY,
      csrfToken: this.mac('csrf', claims.sid),
    };
    this.claims.set(session, claims);
    return session;
  }

  private binding(user: AdminUser): string {
    return this.mac('user', `${user.name}\n${user.role}\n${user.secret}`).slice(0, 22);
  }

  private mac(purpose: string, data: string): string {
    return createHmac('sha256', this.secret).update(`${purpose}\n${data}`).digest('base64url');
  }

  private seal(purpose: string, payload: object): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.mac(purpose, body)}`;
  }

  private open<T>(purpose: string, token: string | undefined): T | null {
    if (!token || token.length > 4096) return null;
    const [body, signature, extra] = token.split('.');
    if (!body || !signature || extra !== undefined || !safeEqual(this.mac(purpose, body), signature)) return null;
    try {
      const value: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      return value && typeof value === 'object' ? (value as T) : null;
    } catch {
      return null;
    }
  }

  private setCookie(request: FastifyRequest, reply: FastifyReply, name: string, value: string, maxAgeMs: number): void {
    // Secure whenever the request came over TLS, also through a TLS-terminating proxy listed in
    // TRUSTED_PROXIES (Fastify then reads the protocol from its X-Forwarded-Proto).
    const secure = request.protocol === 'https' ? '; Secure' : '';
    void reply.header('set-cookie', `${name}=${value}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(maxAgeMs / 1000)}${secure}`);
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
