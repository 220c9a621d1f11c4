import 'reflect-metadata';
import { loadOrExit, loadServiceConfig } from '@cardpull/config';
import { createHttpApp, preflightOrExit } from '@cardpull/platform';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  const config = loadOrExit(() => loadServiceConfig());
  await preflightOrExit(config, 'worker');
  const app = await createHttpApp(WorkerModule.forConfig(config));
  await app.listen({ port: config.WORKER_PORT, host: config.HOST });
  process.stdout.write(`cardpull worker running; health on http://${config.HOST}:${config.WORKER_PORT}/health/ready\n`);
}

void main();
