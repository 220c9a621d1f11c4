import { Inject, Injectable } from '@nestjs/common';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import { simLimitsSchema, type SimLimits } from '@cardpull/sim-contract';
import { Limiter } from '../limits/limiter';
import { SimClock } from './sim-clock';
import { SimWorld } from './world';

/**
 * Holds the current world, the rate limiter and the partner's clock; /_sim/reset swaps in a fresh world, the
 * limits of SIM_LIMITS and the clock of the settings.
 */
@Injectable()
export class SimStateService {
  private current: SimWorld;
  private readonly configuredLimits: SimLimits;
  readonly limiter: Limiter;
  readonly clock: SimClock;

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
  }

  private seed(): SimWorld {
    return new SimWorld(this.config.SIM_MODE, this.config.SIM_INITIAL_BALANCE);
  }
}
