import { INTAKE_FN } from './intake.repository';
import { TAKE_STEP_FN } from './steps.repository';
import { STORE_CARD_FN, TRANSITION_FN } from './transitions.repository';
import { createFunctionSql, type ServerFunction } from './server-functions';

/** The hot statements that have a server-side function (server-functions.ts), in the migration's order. */
export const HOT_FUNCTIONS: ServerFunction[] = [INTAKE_FN, TAKE_STEP_FN, STORE_CARD_FN, TRANSITION_FN];

/**
 * The migration that creates (or replaces) them, as prisma/migrations/<stamp>_<name>/migration.sql holds it:
 *   node node_modules/tsx/dist/cli.mjs -e "import('./libs/orders/src/write/hot-functions').then((m) => process.stdout.write(m.hotFunctionsMigration()))"
 */
export function hotFunctionsMigration(): string {
  return [
    '-- The hot statements as server-side functions (libs/orders/src/write/server-functions.ts): their plans are kept per',
    '-- database connection, also behind a transaction pooler that loses named prepared statements. Generated from',
    '-- the statements in the repositories by hotFunctionsMigration() (libs/orders/src/write/hot-functions.ts).',
    ...HOT_FUNCTIONS.map((f) => `\n${createFunctionSql(f)}`),
    '',
  ].join('\n');
}
