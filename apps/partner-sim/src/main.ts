import { Logger } from '@nestjs/common';
import { loadOrExit, loadSimConfig } from '@cardpull/config';
import { createSimApp } from './sim.app';

async function main(): Promise<void> {
  const config = loadOrExit(() => loadSimConfig());
  // Own process: silent means no line at all, Nest's own included.
  if (config.LOG_LEVEL === 'silent') Logger.overrideLogger(false);
  const app = await createSimApp(config);
  // SIGTERM / SIGINT close the app: timers are cleared and open connections closed.
  app.enableShutdownHooks();
  await app.listen({ port: config.SIM_PORT, host: config.SIM_HOST });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.SIM_PORT;
  new Logger('PartnerSim').log(
    `partner simulator listening on http://${config.SIM_HOST}:${port} (mode ${config.SIM_MODE}, control API ${config.SIM_CONTROL ? 'on' : 'off'})`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`partner simulator failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
