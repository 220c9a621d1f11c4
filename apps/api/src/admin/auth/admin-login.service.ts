import { Inject, Injectable, Logger } from '@nestjs/common';
import { SERVICE_CONFIG, verifyAdminPassword, type AdminUser, type ServiceConfig } from '@cardpull/config';

/** Failed logins allowed per user name and client address within the window before they are refused for a while. */
const MAX_FAILURES = 10;
const WINDOW_MS = 15 * 60_000;

/**
 * Checked for an unknown name, so it costs what a wrong password costs. Its hash needs no real password
 * (nothing logs in as it): a fixed one spares every start-up a blocking scrypt.
 */
const DECOY: AdminUser = { name: '', secret: `scrypt$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`, role: 'viewer' };

export type LoginResult = { ok: true; user: AdminUser } | { ok: false; reason: 'invalid' | 'throttled' };

/**
 * Checks a user name and password against ADMIN_USERS (never API keys). An unknown name costs the same
 * as a wrong password (a decoy hash is checked), and repeated failures for one name from one address are
 * throttled (keyed by both, so a shared proxy address cannot lock every operator out).
 */
@Injectable()
export class AdminLogin {
  private readonly log = new Logger(AdminLogin.name);
  private readonly failures = new Map<string, number[]>();

  constructor(@Inject(SERVICE_CONFIG) private readonly config: ServiceConfig) {}

  check(address: string, name: string, password: string): LoginResult {
    const now = Date.now();
    const key = `${address}|${name}`;
    const recent = (this.failures.get(key) ?? []).filter((t) => now - t < WINDOW_MS);
    if (recent.length >= MAX_FAILURES) {
      this.log.warn({ address, user: name }, 'admin login refused: too many failures for this user from this address');
      return { ok: false, reason: 'throttled' };
    }
    const user = this.config.ADMIN_USERS.find((u) => u.name === name);
    const valid = verifyAdminPassword(user ?? DECOY, password) && !!user;
    if (!valid) {
      this.remember(key, [...recent, now]);
      this.log.warn({ address, user: name }, 'admin login failed');
      return { ok: false, reason: 'invalid' };
    }
    this.failures.delete(key);
    this.log.log({ address, user: user.name, role: user.role }, 'admin login');
    return { ok: true, user };
  }

  private remember(key: string, times: number[]): void {
    // Bounded memory: forget the oldest entry when too many are tracked.
    if (this.failures.size >= 10_000 && !this.failures.has(key)) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(key, times);
  }
}
