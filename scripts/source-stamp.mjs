// What a build of the three apps read, summed up: the path, size and modification time of every file under
// apps/ and libs/ and of the build's configs and lockfile. `npm start` builds only when it differs from the
// stamp the last build wrote (dist/.source-stamp); `npm test` writes it after its own builds.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const APPS = ['api', 'worker', 'partner-sim'];
const stampFile = (root) => join(root, 'dist', '.source-stamp');

export function sourceStamp(root) {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        const { size, mtimeMs } = statSync(path);
        hash.update(`${relative(root, path)}\0${size}\0${mtimeMs}\n`);
      }
    }
  };
  for (const dir of ['apps', 'libs']) walk(join(root, dir));
  for (const file of ['nest-cli.json', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) {
    if (existsSync(join(root, file))) hash.update(`${file}\0${statSync(join(root, file)).mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** True when the three apps' entry points exist and nothing they were built from changed since. */
export function buildIsCurrent(root) {
  const entries = APPS.map((app) => join(root, 'dist', 'apps', app, 'apps', app, 'src', 'main.js'));
  return entries.every((e) => existsSync(e)) && existsSync(stampFile(root)) && readFileSync(stampFile(root), 'utf8') === sourceStamp(root);
}

/** After a build of the three apps from the current sources. */
export function writeStamp(root) {
  writeFileSync(stampFile(root), sourceStamp(root));
}
