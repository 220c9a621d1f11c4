import { Inject, Injectable } from '@nestjs/common';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import { SimWorld } from './world';

/** Holds the current world; /_sim/reset swaps in a fresh one built from the seed. */
@Injectable()
export class SimStateService {
  private current: SimWorld;

  constructor(@Inject(SIM_CONFIG) private readonly config: SimConfig) {
    this.current = this.seed();
  }

  get world(): SimWorld {
    return this.current;
  }

  reset(): void {
    this.current = this.seed();
  }

  private seed(): SimWorld {
    return new SimWorld(this.config.SIM_MODE, this.config.SIM_INITIAL_BALANCE);
  }
}
