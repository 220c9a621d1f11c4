import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startPostgres, startRedis, startRedisClusterForRun, type ChaosPostgres, type ChaosRedis } from './databases';
import { SimClient } from './faults';
import { freePort, sleep, spawnApp, waitHealthy, type AppProcess, type Cleanup, type Log } from './infra';
import { servicePartnerLimits, type ChaosSettings } from './settings';

/**
 * cardpull as the chaos run starts it: its own Postgres and Redis, the simulator, the API and N workers as
 * separate processes of the built apps, each with its own log file in the report directory. The API and
 * the workers sit in slots: a killed (or crashed) one is replaced in its slot (same port, a new log file).
 */

export interface ServiceSlot {
  app: 'api' | 'worker';
  label: string;
  port: number;
  proc: AppProcess;
  generation: number;
  restarting: boolean;
}

export interface KillRecord {
  at: number;
  worker: string;
  pid: number;
  newPid: number | null;
  restartMs: number | null;
}

export class ChaosStack {
  readonly procs: AppProcess[] = [];
  /** The workers' slots. */
  readonly slots: ServiceSlot[] = [];
  private apiSlot!: ServiceSlot;
  /** Processes that crashed and were started again, as a supervisor (systemd, Kubernetes) would. */
  readonly crashRestarts: { label: string; pid: number; newPid: number | null }[] = [];
  readonly kills: KillRecord[] = [];
  private readonly restarts = new Set<Promise<void>>();
  pg!: ChaosPostgres;
  redis!: ChaosRedis;
  sim!: SimClient;
  apiUrl = '';
  readonly apiKey = `chaos-${randomBytes(12).toString('hex')}`;
  private serviceEnv: Record<string, string> = {};

  constructor(
    private readonly settings: ChaosSettings,
    private readonly reportDir: string,
    private readonly log: Log,
    private readonly cleanup: Cleanup,
  ) {}

  async start(): Promise<void> {
    const { settings, reportDir, log, cleanup } = this;
    this.pg = await startPostgres({ prefer: settings.postgres, sharedUrl: settings.sharedDatabaseUrl, reportDir, log, cleanup });
    this.redis = settings.redis === 'cluster' ? await startRedisClusterForRun({ log, cleanup }) : await startRedis({ reportDir, log, cleanup });
    cleanup.add('kill the processes', async () => {
      for (const p of this.procs) p.kill('SIGKILL');
      await Promise.all(this.procs.map((p) => p.exited));
    });

    const [simPort, apiPort] = [await freePort(), await freePort()];
    const simUrl = `http://127.0.0.1:${simPort}`;
    const t = settings.timings;
    const sim = this.spawn('partner-sim', 'partner-sim', {
      LOG_LEVEL: 'info',
      SIM_HOST: '127.0.0.1',
      SIM_PORT: String(simPort),
      SIM_CONTROL: 'true',
      SIM_MODE: 'production',
      SIM_ASYNC_DELAY_MS: t.SIM_ASYNC_DELAY_MS!,
      ...(settings.partnerLimits ? { SIM_LIMITS: JSON.stringify(settings.partnerLimits) } : {}),
    });
    await waitHealthy(sim, `${simUrl}/_sim/health`);
    this.sim = new SimClient(simUrl);

    const { SIM_ASYNC_DELAY_MS: _simOnly, ...serviceTimings } = t;
    this.serviceEnv = {
      // Against the local simulator with its public credentials: the local profile (docs/SECURITY.md).
      CARDPULL_PROFILE: 'local',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      DATABASE_URL: this.pg.url,
      ...this.redis.env,
      API_KEYS: `chaos:${this.apiKey}`,
      PARTNER_ENV: 'staging',
      PARTNER_BASE_URL: simUrl,
      ...serviceTimings,
      // The partner's limits, shared by every process through Redis (issue 12).
      ...(settings.partnerLimits ? { PARTNER_LIMITS: servicePartnerLimits(settings.partnerLimits) } : {}),
    };
    this.apiUrl = `http://127.0.0.1:${apiPort}`;
    this.apiSlot = this.newSlot('api', 'api', apiPort);
    await waitHealthy(this.apiSlot.proc, `${this.apiUrl}/health/ready`);
    for (let i = 0; i < settings.workers; i++) this.slots.push(this.newSlot('worker', `worker-${i + 1}`, await freePort()));
    await Promise.all(this.slots.map((s) => waitHealthy(s.proc, `http://127.0.0.1:${s.port}/health/live`)));
    log(`processes up: partner-sim ${simUrl}, api ${this.apiUrl}, ${this.slots.length} workers (pids ${this.slots.map((s) => s.proc.pid).join(', ')}); logs in ${reportDir}`);
  }

  private spawn(app: 'partner-sim' | 'api' | 'worker', label: string, env: Record<string, string>): AppProcess {
    const proc = spawnApp(app, label, env, join(this.reportDir, `${label}.log`));
    this.procs.push(proc);
    return proc;
  }

  private newSlot(app: 'api' | 'worker', label: string, port: number): ServiceSlot {
    const slot: ServiceSlot = { app, label, port, proc: undefined as unknown as AppProcess, generation: 0, restarting: false };
    slot.proc = this.spawnInSlot(slot);
    return slot;
  }

  private spawnInSlot(slot: ServiceSlot): AppProcess {
    const env = slot.app === 'api' ? { PORT: String(slot.port), WORKER_PORT: '0' } : { WORKER_PORT: String(slot.port), PORT: '0' };
    return this.spawn(slot.app, slot.generation ? `${slot.label}.${slot.generation}` : slot.label, { ...this.serviceEnv, ...env });
  }

  /** Whether a killed or crashed process is still being brought back. */
  get restarting(): boolean {
    return this.restarts.size > 0;
  }

  /** SIGKILL of a random live worker; it is started again in its slot 1-2 s later. */
  killRandomWorker(elapsedMs: number): KillRecord | null {
    const live = this.slots.filter((s) => !s.restarting && !s.proc.exit);
    if (!live.length) return null;
    const slot = live[Math.floor(Math.random() * live.length)]!;
    const record: KillRecord = { at: elapsedMs, worker: slot.label, pid: slot.proc.pid, newPid: null, restartMs: null };
    slot.proc.kill('SIGKILL');
    this.kills.push(record);
    const killedAt = Date.now();
    this.respawn(slot, 1_000 + Math.random() * 1_000, (pid) => {
      record.newPid = pid;
      record.restartMs = Date.now() - killedAt;
    });
    return record;
  }

  /**
   * Starts again, like a supervisor would, every API or worker process that exited by itself (a crash:
   * still a violation in the report, but the run goes on and shows what else breaks). Answers those
   * newly found.
   */
  superviseCrashes(): AppProcess[] {
    const found: AppProcess[] = [];
    for (const slot of [this.apiSlot, ...this.slots]) {
      if (!slot || slot.restarting || !slot.proc.exit || slot.proc.expectedExit) continue;
      found.push(slot.proc);
      const record: { label: string; pid: number; newPid: number | null } = { label: slot.proc.label, pid: slot.proc.pid, newPid: null };
      this.crashRestarts.push(record);
      this.respawn(slot, 1_000, (pid) => (record.newPid = pid));
    }
    return found;
  }

  private respawn(slot: ServiceSlot, delayMs: number, onBack: (pid: number) => void): void {
    slot.restarting = true;
    const restart = (async () => {
      await slot.proc.exited;
      await sleep(delayMs);
      for (let tries = 1; ; tries++) {
        slot.generation++;
        slot.proc = this.spawnInSlot(slot);
        try {
          await waitHealthy(slot.proc, `http://127.0.0.1:${slot.port}/health/live`);
          break;
        } catch (error) {
          // It may refuse to start while Postgres is down (start-up check): try again.
          this.log(`${slot.label} did not come back (try ${tries}): ${(error as Error).message}`);
          slot.proc.expectedExit = true;
          slot.proc.kill('SIGKILL');
          await slot.proc.exited;
          if (tries >= 10) throw error;
          await sleep(1_000);
        }
      }
      onBack(slot.proc.pid);
    })();
    const tracked: Promise<void> = restart
      .catch((error: Error) => this.log(`could not restart ${slot.label}: ${error.message}`))
      .finally(() => {
        slot.restarting = false;
        this.restarts.delete(tracked);
      });
    this.restarts.add(tracked);
  }

  /** Until every killed worker is back (or given up). */
  async restartsDone(): Promise<void> {
    while (this.restarts.size) await Promise.all([...this.restarts]);
  }

  /** Processes that exited without being killed or stopped by the run (a crash). */
  unexpectedExits(): AppProcess[] {
    return this.procs.filter((p) => p.exit && !p.expectedExit);
  }

  /** SIGTERM to the workers and the API (graceful drain), so nothing changes while the run verifies. */
  async stopService(): Promise<void> {
    await this.restartsDone();
    await Promise.all(this.procs.filter((p) => p.app !== 'partner-sim').map((p) => p.stop(10_000)));
  }

}
