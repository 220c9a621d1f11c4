import { chromium, type Browser, type Page } from 'playwright-core';
import { request } from 'undici';
import type { Stack } from '../../support/stack';

/** Operators of the suites: an admin and a viewer (plain passwords: a local run). */
export const ALICE = { user: 'alice', password: 'alice-secret-1' };
export const VICTOR = { user: 'victor', password: 'victor-secret-1' };
/** Only for the login throttle (a user whose logins get blocked). */
export const CAROL = { user: 'carol', password: 'carol-secret-1' };
export const ADMIN_ENV: Record<string, string> = {
  ADMIN_USERS: `${ALICE.user}:${ALICE.password},${VICTOR.user}:${VICTOR.password}:viewer,${CAROL.user}:${CAROL.password}`,
  ADMIN_SESSION_SECRET: 'admin-session-secret-for-tests-0001',
  // The reconciler would re-check needs_attention orders by itself; the suites act on them instead.
  RECONCILE_INTERVAL_MS: '3600000',
};

export interface AdminResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** One HTTP call to the API as a browser or a script would make it (no API key). */
export async function adminCall(
  stack: Stack,
  method: string,
  path: string,
  opts: { cookie?: string; form?: Record<string, string>; html?: boolean; headers?: Record<string, string> } = {},
): Promise<AdminResponse> {
  const res = await request(`${stack.apiUrl}${path}`, {
    method: method as 'GET',
    headers: {
      ...(opts.html ? { accept: 'text/html,application/xhtml+xml' } : {}),
      ...(opts.cookie ? { cookie: opts.cookie } : {}),
      ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...opts.headers,
    },
    body: opts.form ? new URLSearchParams(opts.form).toString() : undefined,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

const setCookies = (res: AdminResponse): string[] => {
  const raw = res.headers['set-cookie'];
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
};

/** The session cookie's Set-Cookie line of a response, if any. */
export const sessionSetCookie = (res: AdminResponse): string | undefined => setCookies(res).find((c) => c.startsWith('cardpull_admin='));

/** Logs in and returns the Cookie header value to send back. */
export async function login(stack: Stack, who: { user: string; password: string }): Promise<string> {
  const res = await adminCall(stack, 'POST', '/admin/login', { form: { user: who.user, password: who.password } });
  const line = sessionSetCookie(res);
  if (res.status !== 303 || !line) throw new Error(`login of ${who.user} failed: ${res.status}`);
  return line.split(';')[0]!;
}

/** The CSRF token a page's forms carry. */
export function csrfOf(page: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(page);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1]!;
}

/** Debian's Chromium, headless, driven by playwright-core (no browser download). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** A 1366x768 page of `browser`, logged in as `who` through the login form. */
export async function loggedInPage(browser: Browser, stack: Stack, who: { user: string; password: string }): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
  await page.goto(`${stack.apiUrl}/admin/login`);
  await page.fill('#user', who.user);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/admin/login')), page.click('button[type=submit]')]);
  return page;
}
