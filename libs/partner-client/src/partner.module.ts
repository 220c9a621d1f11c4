import { Global, Logger, Module } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { isLogged } from '@cardpull/logger';
import type { CallGate } from './call-gate';
import { PartnerClient, type PartnerCallEvent, type PartnerClientOptions } from './partner-client';

/** The fleet's limits on partner calls (libs/traffic provides it; without it, calls are not limited). */
export const CALL_GATE = Symbol('CALL_GATE');

/** The partner client's address, credentials, signature form and timeout, from the service settings. */
export function partnerClientOptions(c: ServiceConfig): PartnerClientOptions {
  return {
    baseUrl: c.PARTNER_BASE_URL,
    apiKey: c.PARTNER_API_KEY,
    identifier: c.PARTNER_IDENTIFIER,
    sharedKeyHex: c.PARTNER_SHARED_KEY,
    signatureForm: c.PARTNER_SIGNATURE_FORM,
    timeoutMs: c.PARTNER_TIMEOUT_MS,
    timeouts: { sync: c.PARTNER_TIMEOUT_SYNC_MS, create: c.PARTNER_TIMEOUT_CREATE_MS, poll: c.PARTNER_TIMEOUT_POLL_MS, read: c.PARTNER_TIMEOUT_READ_MS },
  };
}

/** Listeners of partner calls (metrics): providers push into it, the client reports every call. */
export class PartnerCallListeners {
  private readonly listeners: ((event: PartnerCallEvent) => void)[] = [];
  add(listener: (event: PartnerCallEvent) => void): void {
    this.listeners.push(listener);
  }
  emit(event: PartnerCallEvent): void {
    for (const l of this.listeners) l(event);
  }
}

@Global()
@Module({
  providers: [
    PartnerCallListeners,
    {
      provide: PartnerClient,
      inject: [SERVICE_CONFIG, PartnerCallListeners, { token: CALL_GATE, optional: true }],
      useFactory: (c: ServiceConfig, listeners: PartnerCallListeners, gate?: CallGate) => {
        const log = new Logger(PartnerClient.name);
        return new PartnerClient({
          ...partnerClientOptions(c),
          connections: Math.max(16, c.WORKER_CONCURRENCY),
          // A debug line per call: built and handed to Nest's Logger only when debug lines are written.
          logger: { debug: (o, m) => isLogged('debug') && log.debug(o, m), warn: (o, m) => log.warn(o, m) },
          onCall: (event) => listeners.emit(event),
          ...(gate ? { gate } : {}),
        });
      },
    },
  ],
  exports: [PartnerClient, PartnerCallListeners],
})
export class PartnerModule {}
