import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { SERVICE_CONFIG, verifyAdminPasswordAsync, type AdminUser, type ServiceConfig } from '@cardpull/config';
import { FleetCounters } from '@cardpull/platform';

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
 * address (50 in 15 minutes, whatever the names: no spraying), counted across the fleet in Redis
 * (FleetCounters): N API processes allow what one allows. Each try is counted as a failure before the
 * password is checked (so concurrent tries cannot all slip under the limit) and taken back if it was right.
 */
@Injectable()
export class AdminLogin {
  private readonly log = new Logger(AdminLogin.name);

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: Pick<ServiceConfig, 'ADMIN_USERS'>,
    @Inject(FleetCounters) private readonly counters: FleetCounters,
  ) {}

  async check(address: string, name: string, password: string): Promise<LoginResult> {
    const byName = `login:${address}|${name}`;
    const byAddress = `login:${address}`;
    const attempt = randomUUID();
    if (!(await this.counters.attempt([byName, byAddress], [MAX_FAILURES, MAX_ADDRESS_FAILURES], WINDOW_MS, attempt))) {
      this.log.warn({ address, user: name }, 'admin login refused: too many failures from this address');
      return { ok: false, reason: 'throttled' };
    }
    const user = this.config.ADMIN_USERS.find((u) => u.name === name);
    const valid = (await verifyAdminPasswordAsync(user ?? DECOY, password)) && !!user;
    if (!valid) {
      this.log.warn({ address, user: name }, 'admin login failed');
      return { ok: false, reason: 'invalid' };
    }
    // A right password clears the name's failures from this address, and is not one itself.
    await this.counters.forget([byName], [byAddress], attempt);
    this.log.log({ address, user: user.name, role: user.role }, 'admin login');
    return { ok: true, user };
  }
}
