import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** The answer ThrottlerStorage.increment gives the guard (times in whole seconds, as the guard expects). */
interface ThrottlerRecord {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
}

interface Window {
  expiresAt: number;
  hits: number;
  blockedUntil: number;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * Rate-limit counts in O(1) per request: one fixed window per client (RATE_LIMIT_WINDOW_MS, starting at the
 * client's first request), as Redis-backed throttler storages count. @nestjs/throttler's own in-memory
 * storage keeps the expiry of every hit and filters that list on every request: with a wide window and a
 * high limit that cost grew with the rate and halved the intake (docs/BENCHMARKS.md). A fixed window lets a
 * client send up to twice the limit across a window boundary; the limit protects the service from a runaway
 * caller, so that is an acceptable trade for a constant cost. The API counts in Redis across the fleet
 * (FleetCounters, the same rule in a script); this in-memory storage is what a process falls back to while
 * Redis does not answer.
 */
@Injectable()
export class FixedWindowThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly windows = new Map<string, Window>();
  private sweeper?: NodeJS.Timeout;
  private sweepEveryMs = 0;

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerRecord> {
    const now = Date.now();
    const id = `${throttlerName}\u0000${key}`;
    this.ensureSweeper(Math.max(ttl, blockDuration));
    let w = this.windows.get(id);
    if (w && w.blockedUntil > now) {
      return { totalHits: w.hits, timeToExpire: seconds(w.expiresAt - now), isBlocked: true, timeToBlockExpire: seconds(w.blockedUntil - now) };
    }
    if (!w || w.expiresAt <= now) {
      w = { expiresAt: now + ttl, hits: 0, blockedUntil: 0 };
      this.windows.set(id, w);
    }
    w.hits++;
    if (w.hits > limit) {
      // Refused until the block ends (blockDuration defaults to the window); a new window starts after it.
      w.blockedUntil = now + (blockDuration > 0 ? blockDuration : ttl);
      w.expiresAt = Math.min(w.expiresAt, w.blockedUntil);
      return { totalHits: w.hits, timeToExpire: seconds(w.expiresAt - now), isBlocked: true, timeToBlockExpire: seconds(w.blockedUntil - now) };
    }
    return { totalHits: w.hits, timeToExpire: seconds(w.expiresAt - now), isBlocked: false, timeToBlockExpire: 0 };
  }

  /** Forgets windows that ended (a client that stopped calling costs nothing after its window). */
  sweep(now = Date.now()): void {
    for (const [id, w] of this.windows) if (w.expiresAt <= now && w.blockedUntil <= now) this.windows.delete(id);
  }

  get size(): number {
    return this.windows.size;
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private ensureSweeper(everyMs: number): void {
    if (this.sweeper && this.sweepEveryMs >= everyMs) return;
    clearInterval(this.sweeper);
    this.sweepEveryMs = everyMs;
    this.sweeper = setInterval(() => this.sweep(), everyMs);
    this.sweeper.unref();
  }
}
