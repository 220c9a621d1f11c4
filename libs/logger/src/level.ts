import { PinoLogger } from 'nestjs-pino';

/** Nest's log levels as pino names them. */
const PINO_LEVEL = { debug: 'debug', log: 'info', warn: 'warn' } as const;

/**
 * Whether a line at this Nest level is written (pino's root logger decides; without one, say yes). Asked
 * before building a line on a hot path: Nest's Logger reaches pino through several layers before pino
 * drops a line below its level (a debug line per partner call cost 7 µs per card in the worker, written
 * or not).
 */
export function isLogged(level: keyof typeof PINO_LEVEL): boolean {
  const root = PinoLogger.root as PinoLogger['logger'] | undefined;
  return root ? root.isLevelEnabled(PINO_LEVEL[level]) : true;
}
