import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { ServiceConfig, SimConfig } from './settings';

/** Injection tokens: inject the validated settings object, never read process.env elsewhere. */
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
export const SIM_CONFIG = Symbol('SIM_CONFIG');

@Global()
@Module({})
export class ConfigModule {
  /** The settings are loaded once by the entry point (so a bad one stops the process before Nest starts). */
  static forService(config: ServiceConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: SERVICE_CONFIG, useValue: config }], exports: [SERVICE_CONFIG] };
  }

  static forSim(config: SimConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: SIM_CONFIG, useValue: config }], exports: [SIM_CONFIG] };
  }
}
