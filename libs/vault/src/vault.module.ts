import { Global, Module } from '@nestjs/common';
import { SERVICE_CONFIG, type ServiceConfig } from '@cardpull/config';
import { Vault } from './vault';

@Global()
@Module({
  providers: [{ provide: Vault, inject: [SERVICE_CONFIG], useFactory: (c: ServiceConfig) => new Vault(c.CARD_ENCRYPTION_KEYS) }],
  exports: [Vault],
})
export class VaultModule {}
