import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { SIM_CONFIG, type SimConfig } from '@cardpull/config';
import type { SignatureForm } from '@cardpull/partner-client';
import { SimStateService } from '../state/sim-state.service';
import { FORMS, verifySignature } from './signature';

/** Every partner endpoint requires the Authorization header (spec, Endpoints); the result goes to the ledger. */
@Injectable()
export class SignatureGuard implements CanActivate {
  constructor(
    @Inject(SIM_CONFIG) private readonly config: SimConfig,
    private readonly state: SimStateService,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    const header = req.headers.authorization;
    const clock = this.state.clock;
    const error = verifySignature(this.config, {
      method: req.method,
      path: req.originalUrl,
      host: req.headers.host,
      authorization: typeof header === 'string' ? header : undefined,
      body: req.sim.body,
    }, clock.nowMs(), clock.current, formsOf(this.state.readings.signature_forms));
    if (req.sim.entry) req.sim.entry.auth = error ? error.code : 'ok';
    if (error) throw error;
    return true;
  }
}

const formsOf = (reading: 'both' | SignatureForm): readonly SignatureForm[] => (reading === 'both' ? FORMS : [reading]);
