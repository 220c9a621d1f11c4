import 'reflect-metadata';
import { loadOrExit, loadServiceConfig } from '@cardpull/config';
import { createHttpApp, preflightOrExit, setupTracing } from '@cardpull/platform';
import { ApiModule } from './api.module';
import { setupApiDocs } from './docs/openapi';

async function main(): Promise<void> {
  const config = loadOrExit(() => loadServiceConfig());
  // Traces only with OTEL_EXPORTER_OTLP_ENDPOINT (docs/operations.md, Traces).
  setupTracing({ service: 'cardpull-api', endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  await preflightOrExit(config, 'api');
  const app = await createHttpApp(ApiModule.forConfig(config), { bodyLimit: 16 * 1024, trustedProxies: config.TRUSTED_PROXIES });
  setupApiDocs(app);
  await app.listen({ port: config.PORT, host: config.HOST });
  // The port bound (PORT=0 takes a free one, as the multi-process tests do).
  const address = app.getHttpServer().address();
  const base = `http://${config.HOST}:${typeof address === 'object' && address ? address.port : config.PORT}`;
  process.stdout.write(
    `cardpull api listening on ${base} (partner ${config.PARTNER_BASE_URL}, ${config.PARTNER_ENV}); docs ${base}/docs, metrics ${base}/metrics\n`,
  );
}

void main();
