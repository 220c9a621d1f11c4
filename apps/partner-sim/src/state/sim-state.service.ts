import { Inject, Injectable } from '@nestjs/common';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import { DEFAULT_SIM_READINGS, simLimitsSchema, type SimLimits, type SimReadings, type SimReadingsInput } from '@cardpull/sim-contract';
import { Limiter } from '../limits/limiter';
import { SimClock } from './sim-clock';
import { SimWorld } from './world';

/**
 * Holds the current world, the rate limiter, the partner's clock and the readings of its answers' shapes
 * (PUT /_sim/readings); /_sim/reset swaps in a fresh world, the limits of SIM_LIMITS, the clock of the
 * settings and the default readings.
 */
@Injectable()
export class SimStateService {
  private current: SimWorld;
  private readonly configuredLimits: SimLimits;
  readonly limiter: Limiter;
  readonly clock: SimClock;
  private currentReadings: SimReadings = { ...DEFAULT_SIM_READINGS };

  constructor(@Inject(SIM_CONFIG) private readonly config: SimConfig) {
    this.current = this.seed();
    const parsed = simLimitsSchema.safeParse(config.SIM_LIMITS);
    if (!parsed.success) throw new Error(`SIM_LIMITS: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'limits'}: ${i.message}`).join('; ')}`);
    this.configuredLimits = parsed.data;
    this.limiter = new Limiter(this.configuredLimits);
    this.clock = new SimClock(config);
  }

  get world(): SimWorld {
    return this.current;
  }

  reset(): void {
    this.current = this.seed();
    this.limiter.reset(this.configuredLimits);
    this.clock.reset();
    this.currentReadings = { ...DEFAULT_SIM_READINGS };
  }

  get readings(): Readonly<SimReadings> {
    return this.currentReadings;
  }

  setReadings(input: SimReadingsInput): SimReadings {
    this.currentReadings = { ...this.currentReadings, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) };
    return { ...this.currentReadings };
  }

  private seed(): SimWorld {
    return new SimWorld(this.config.SIM_MODE, this.config.SIM_INITIAL_BALANCE);
  }
}
