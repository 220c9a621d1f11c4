import { Inject, Injectable, Logger } from '@nestjs/common';
import { SERVICE_CONFIG, verifyAdminPasswordAsync, type AdminUser, type ServiceConfig } from '@cardpull/config';

/** Failed logins allowed per user name and client address within the window before they are refused for a while. */
const MAX_FAILURES = 10;
/** Failed logins allowed from one address, whatever the names tried (a spray over many names). */
const MAX_ADDRESS_FAILURES = 50;
const WINDOW_MS = 15 * 60_000;

/**
 * Checked for an unknown name, so it costs what a wrong password costs. Its hash needs no real password
 * (nothing logs in as it): a fixed one spares every start-up a blocking scrypt.
 */
const DECOY: AdminUser = { name: '', secret: `scrypt$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`, role: 'viewer' };

export type LoginResult = { ok: true; user: AdminUser } | { ok: false; reason: 'invalid' | 'throttled' };

/**
 * Checks a user name and password against ADMIN_USERS (never API keys), for the login form and the API
 * documentation's Basic auth. The scrypt runs off the event loop (verifyAdminPasswordAsync). An unknown name
 * costs the same as a wrong password (a decoy hash is checked). Failures are throttled per name and address
 * (10 in 15 minutes: keyed by both, so an attacker cannot lock an operator out from every address) and per
 * address (50 in 15 minutes, whatever the names: no spraying).
 */
@Injectable()
export class AdminLogin {
  private readonly log = new Logger(AdminLogin.name);
  private readonly failures = new Map<string, number[]>();

  constructor(@Inject(SERVICE_CONFIG) private readonly config: ServiceConfig) {}

  async check(address: string, name: string, password: string): Promise<LoginResult> {
    const now = Date.now();
    const key = `${address}|${name}`;
    const recent = this.recent(key, now);
    const fromAddress = this.recent(address, now);
    if (recent.length >= MAX_FAILURES || fromAddress.length >= MAX_ADDRESS_FAILURES) {
      this.log.warn({ address, user: name }, 'admin login refused: too many failures from this address');
      return { ok: false, reason: 'throttled' };
    }
    const user = this.config.ADMIN_USERS.find((u) => u.name === name);
    const valid = (await verifyAdminPasswordAsync(user ?? DECOY, password)) && !!user;
    if (!valid) {
      this.remember(key, [...this.recent(key, now), now]);
      this.remember(address, [...this.recent(address, now), now]);
      this.log.warn({ address, user: name }, 'admin login failed');
      return { ok: false, reason: 'invalid' };
    }
    this.failures.delete(key);
    this.log.log({ address, user: user.name, role: user.role }, 'admin login');
    return { ok: true, user };
  }

  private recent(key: string, now: number): number[] {
    return (this.failures.get(key) ?? []).filter((t) => now - t < WINDOW_MS);
  }

  private remember(key: string, times: number[]): void {
    // Bounded memory: forget the oldest entry when too many are tracked.
    if (this.failures.size >= 10_000 && !this.failures.has(key)) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(key, times);
  }
}
