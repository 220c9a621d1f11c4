#!/usr/bin/env node
// Keeps package-lock.json complete for every platform.
//
// The npm registry reachable from this project's build machines serves only some platform builds of a few
// native packages (e.g. @unrs/resolver-binding-darwin-arm64 answers 404), so `npm install` here leaves
// their entries out of the lock, and `npm ci` then refuses the lock as "not in sync". This adds the missing
// optional entries with the os/cpu/libc read from their names (no download address, as the rest of the
// lock): npm skips them on other platforms and fetches them where they apply.
// Run it after `npm install` changes the lock: `node scripts/lockfile-platform-stubs.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const path = join(root, 'package-lock.json');
const lock = JSON.parse(readFileSync(path, 'utf8'));
const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  const abi = parts.find((p) => /^(gnu|gnueabihf|musl|musleabihf|msvc)$/.test(p));
  if (!os || !cpu) return null;
  return {
    os: [os],
    cpu: [cpu],
    ...(abi?.startsWith('gnu') ? { libc: ['glibc'] } : abi?.startsWith('musl') ? { libc: ['musl'] } : {}),
  };
}

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = key ? `${key}/node_modules/` : 'node_modules/';
    if (lock.packages[`${base}${dep}`] || lock.packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) continue;
    lock.packages[`node_modules/${dep}`] = {
      version,
      ...platform,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lockfile-platform-stubs: ${added} platform entr${added === 1 ? 'y' : 'ies'} added`);
