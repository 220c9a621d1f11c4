import 'reflect-metadata';
import { loadOrExit, loadServiceConfig } from '@cardpull/config';
import { createHttpApp, preflightOrExit } from '@cardpull/platform';
import { ApiModule } from './api.module';

async function main(): Promise<void> {
  const config = loadOrExit(() => loadServiceConfig());
  await preflightOrExit(config, 'api');
  const app = await createHttpApp(ApiModule.forConfig(config), { bodyLimit: 16 * 1024 });
  await app.listen({ port: config.PORT, host: config.HOST });
  process.stdout.write(`cardpull api listening on http://${config.HOST}:${config.PORT} (partner ${config.PARTNER_BASE_URL}, ${config.PARTNER_ENV})\n`);
}

void main();
