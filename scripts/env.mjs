// `node --import ./scripts/env.mjs <entry>`: loads the repository's .env before the entry point when there
// is one, and says nothing when there is none (node's --env-file-if-exists prints a line on every start).
// Variables already set in the environment win over the file, as with --env-file.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = fileURLToPath(new URL('../.env', import.meta.url));
if (existsSync(file)) process.loadEnvFile(file);
