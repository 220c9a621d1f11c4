#!/usr/bin/env node
// `npm start`: the whole service on one machine with local defaults: builds, checks Postgres and Redis,
// applies migrations (creating the database if needed), then runs the partner simulator, the worker and
// the API as three processes, their output prefixed. Ctrl-C (or SIGTERM) stops all three gracefully.
// Every setting comes from the environment (see .env.example); nothing needs to be set.
// Logs: the processes write JSON lines (as in production); this launcher shows them readable and coloured
// (pino-pretty) unless LOG_FORMAT=json. Once all three are up it prints where everything is.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APPS, buildIsCurrent, writeStamp } from './source-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = process.execPath;
const step = (label, args) => {
  process.stdout.write(`[start] ${label}\n`);
  const r = spawnSync(node, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

if (Number(process.versions.node.split('.')[0]) < 24) {
  console.error(`[start] Node ${process.versions.node} runs this; cardpull needs Node 24. Run it through npm (npm start), which uses the Node that npm ci installed.`);
  process.exit(1);
}
// A build only when something it read changed since the last one (scripts/source-stamp.mjs); SKIP_BUILD=1
// never builds, BUILD=1 always does.
if (process.env.SKIP_BUILD !== '1') {
  if (process.env.BUILD !== '1' && buildIsCurrent(root)) {
    process.stdout.write('[start] build is up to date (nothing changed since the last one; BUILD=1 builds anyway)\n');
  } else {
    for (const app of APPS) step(`building ${app}`, [join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build', app]);
    writeStamp(root);
  }
}

// Postgres server and Redis, with a message saying how to get them when they are missing.
const require = createRequire(import.meta.url);
const built = join(root, 'dist', 'apps', 'api', 'libs');
if (!existsSync(built)) {
  console.error('[start] the build output is missing; run `npm run build`.');
  process.exit(1);
}
const { checkPostgresServer } = require(join(built, 'db', 'src', 'preflight.js'));
const { checkRedis } = require(join(built, 'queue', 'src', 'redis.js'));
const { loadServiceConfig, loadOrExit } = require(join(built, 'config', 'src', 'index.js'));
// `npm start` is a local run against the simulator: the public development values apply (docs/SECURITY.md).
process.env.CARDPULL_PROFILE ??= 'local';
const config = loadOrExit(() => loadServiceConfig(process.env));
const problems = [await checkPostgresServer(config.DATABASE_URL), (await checkRedis(config.REDIS_URL)).error].filter(Boolean);
if (problems.length) {
  console.error(`[start] cardpull needs PostgreSQL and Redis:\n${problems.map((p) => `- ${p}`).join('\n')}`);
  process.exit(1);
}
step('applying migrations', [join(root, 'scripts', 'prisma-wasm.mjs'), 'migrate']);

const processes = [
  { name: 'sim', entry: 'dist/apps/partner-sim/apps/partner-sim/src/main.js', env: { SIM_CONTROL: process.env.SIM_CONTROL ?? 'true' } },
  // The local profile lets callbacks go to http:// receivers on this machine (CALLBACK_ALLOW_LOCAL; docs/SECURITY.md).
  { name: 'worker', entry: 'dist/apps/worker/apps/worker/src/main.js', env: {} },
  { name: 'api', entry: 'dist/apps/api/apps/api/src/main.js', env: {} },
];
const children = [];
let stopping = false;

const pretty = process.env.LOG_FORMAT === 'json' ? null : require('pino-pretty').prettyFactory({
  colorize: process.stdout.isTTY || process.env.FORCE_COLOR === '1',
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,name',
  singleLine: true,
});
const READY = { sim: /partner simulator listening on/, worker: /cardpull worker running/, api: /cardpull api listening on/ };
const ready = new Set();

/** Nest's start-up inventory (modules loaded, routes mapped): shown in JSON logs, not on a person's screen. */
const BOOT_NOISE = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

function show(name, line) {
  if (!pretty || !line.startsWith('{')) return `[${name}] ${line}\n`;
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return `[${name}] ${line}\n`;
  }
  if (BOOT_NOISE.has(entry.context) && config.LOG_LEVEL !== 'debug' && config.LOG_LEVEL !== 'trace') return '';
  return `[${name}] ${pretty(line)}`;
}

function prefix(name, stream, target) {
  let rest = '';
  stream.on('data', (chunk) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      target.write(show(name, line));
      if (!ready.has(name) && READY[name]?.test(line)) {
        ready.add(name);
        // A moment later: the processes' own start-up lines (written asynchronously) come first.
        if (ready.size === processes.length) setTimeout(firstScreen, 500);
      }
    }
  });
}

/** Where everything is, once the three processes are up. */
function firstScreen() {
  const api = `http://${config.HOST}:${config.PORT}`;
  const key = config.API_KEYS[0];
  const admin = config.ADMIN_USERS[0];
  const rows = [
    ['API', `${api}/v1/orders`, key ? `Authorization: Bearer ${key.key}` : ''],
    ['API docs', `${api}/docs`, 'OpenAPI, try it in the browser'],
    ['Operations page', `${api}/admin`, admin ? `log in as ${admin.name}${process.env.ADMIN_USERS ? '' : ' / admin'}` : 'set ADMIN_USERS'],
    ['Job dashboard', `${api}/admin/queues`, 'bull-board, same login'],
    ['Metrics', `${api}/metrics`, 'Prometheus text (an API key with metrics:read)'],
    ['Worker health', `http://${config.HOST}:${config.WORKER_PORT}/health/ready`, ''],
    ['Partner simulator', config.PARTNER_BASE_URL, 'the local partner (control API under /_sim)'],
    ...(config.CALLBACK_URLS.get('local') ? [['Callbacks', config.CALLBACK_URLS.get('local'), 'where the local client\'s callbacks go: curl it to see them']] : []),
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  const lines = [
    '',
    'cardpull is running (Ctrl-C stops all three)',
    ...rows.map(([what, where, how]) => `  ${what.padEnd(width)}  ${where}${how ? `   ${how}` : ''}`),
    '',
    `  try:  curl -s -X POST ${api}/v1/orders -H 'authorization: Bearer ${key?.key ?? '<key>'}' -H 'idempotency-key: try-1' \\`,
    `          -H 'content-type: application/json' -d '{"gift_card_code":"FAST-FREE","amount":1000}'`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  setTimeout(() => process.exit(code), 15_000).unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.on('exit', r)) : null))).then(() => process.exit(code));
}

for (const p of processes) {
  const child = spawn(node, [join(root, p.entry)], { cwd: root, env: { ...process.env, ...p.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  prefix(p.name, child.stdout, process.stdout);
  prefix(p.name, child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${p.name} exited (${signal ?? code}); stopping the others.`);
      stopAll(code || 1);
    }
  });
  children.push(child);
  // The simulator first, so the API's first catalog fetch finds it.
  if (p.name === 'sim') await new Promise((r) => setTimeout(r, 1500));
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
console.log(`[start] starting: API http://${config.HOST}:${config.PORT}, worker, partner simulator ${config.PARTNER_BASE_URL}${pretty ? '' : ' (JSON logs: LOG_FORMAT=json)'}`);
