import 'reflect-metadata';
import { loadOrExit, loadServiceConfig } from '@cardpull/config';
import { createHttpApp, preflightOrExit, setupTracing } from '@cardpull/platform';
import { WorkerModule } from './worker.module';
import { checkPartnerProfileOrExit } from './probe/profile-check';

async function main(): Promise<void> {
  const config = loadOrExit(() => loadServiceConfig());
  // The partner profile npm run probe wrote: a setting it contradicts stops the worker here, before any call.
  checkPartnerProfileOrExit(config);
  // Traces only with OTEL_EXPORTER_OTLP_ENDPOINT (docs/operations.md, Traces).
  setupTracing({ service: 'cardpull-worker', endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  await preflightOrExit(config, 'worker');
  const app = await createHttpApp(WorkerModule.forConfig(config));
  // WORKER_PORT serves only /health/live, /health/ready and /metrics (internal network, no API key).
  await app.listen({ port: config.WORKER_PORT, host: config.HOST });
  const base = `http://${config.HOST}:${config.WORKER_PORT}`;
  process.stdout.write(`cardpull worker running; health on ${base}/health/ready, metrics on ${base}/metrics\n`);
}

void main();
