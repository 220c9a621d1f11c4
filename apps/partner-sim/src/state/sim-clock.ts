import type { SimConfig } from '@cardpull/config';
import type { SimClockInput, SimClockView, StaleTimestampCode } from '@cardpull/sim-contract';

export interface ClockSettings {
  offsetS: number;
  windowS: number;
  staleCode: StaleTimestampCode;
}

/**
 * The partner's clock as the simulator plays it (SIM_CLOCK_OFFSET_S, SIM_TIMESTAMP_WINDOW_S,
 * SIM_STALE_TIMESTAMP_CODE; PUT /_sim/clock until the next reset): a partner whose clock is off from ours
 * checks Timestamps against its own time and says that time in its Date header.
 */
export class SimClock {
  private settings: ClockSettings;

  constructor(
    private readonly config: Pick<SimConfig, 'SIM_CLOCK_OFFSET_S' | 'SIM_TIMESTAMP_WINDOW_S' | 'SIM_STALE_TIMESTAMP_CODE'>,
    private readonly machineNow: () => number = Date.now,
  ) {
    this.settings = this.configured();
  }

  get current(): Readonly<ClockSettings> {
    return this.settings;
  }

  /** The partner's now, in ms since the epoch. */
  nowMs(): number {
    return this.machineNow() + this.settings.offsetS * 1000;
  }

  set(input: SimClockInput): SimClockView {
    this.settings = {
      offsetS: input.offset_s ?? this.settings.offsetS,
      windowS: input.window_s ?? this.settings.windowS,
      staleCode: input.stale_timestamp_code ?? this.settings.staleCode,
    };
    return this.view();
  }

  reset(): void {
    this.settings = this.configured();
  }

  view(): SimClockView {
    const { offsetS, windowS, staleCode } = this.settings;
    return { offset_s: offsetS, window_s: windowS, stale_timestamp_code: staleCode, now: new Date(this.nowMs()).toISOString() };
  }

  private configured(): ClockSettings {
    return { offsetS: this.config.SIM_CLOCK_OFFSET_S, windowS: this.config.SIM_TIMESTAMP_WINDOW_S, staleCode: this.config.SIM_STALE_TIMESTAMP_CODE };
  }
}
