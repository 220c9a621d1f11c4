import { Controller, Get, Inject } from '@nestjs/common';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';

/** Always on, without signature, even when the control API is off (for start-up scripts and probes). */
@Controller('_sim')
export class HealthController {
  constructor(@Inject(SIM_CONFIG) private readonly config: SimConfig) {}

  @Get('health')
  health(): { status: 'ok'; mode: string; control: boolean } {
    return { status: 'ok', mode: this.config.SIM_MODE, control: this.config.SIM_CONTROL };
  }
}
