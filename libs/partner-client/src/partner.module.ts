import { Global, Logger, Module } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { PartnerClient, type PartnerCallEvent, type PartnerClientOptions } from './partner-client';

/** The partner client's address, credentials, signature form and timeout, from the service settings. */
export function partnerClientOptions(c: ServiceConfig): PartnerClientOptions {
  return {
    baseUrl: c.PARTNER_BASE_URL,
    apiKey: c.PARTNER_API_KEY,
    identifier: c.PARTNER_IDENTIFIER,
    sharedKeyHex: c.PARTNER_SHARED_KEY,
    signatureForm: c.PARTNER_SIGNATURE_FORM,
    timeoutMs: c.PARTNER_TIMEOUT_MS,
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
      inject: [SERVICE_CONFIG, PartnerCallListeners],
      useFactory: (c: ServiceConfig, listeners: PartnerCallListeners) => {
        const log = new Logger(PartnerClient.name);
        return new PartnerClient({
          ...partnerClientOptions(c),
          connections: Math.max(16, c.WORKER_CONCURRENCY),
          logger: { debug: (o, m) => log.debug(o, m), warn: (o, m) => log.warn(o, m) },
          onCall: (event) => listeners.emit(event),
        });
      },
    },
  ],
  exports: [PartnerClient, PartnerCallListeners],
})
export class PartnerModule {}
