#!/usr/bin/env node
// Prisma migrations without the native schema engine, through @prisma/schema-engine-wasm and the pg
// driver adapter. Works offline; keeps Prisma's standard layout (prisma/migrations/<timestamp>_<name>/
// migration.sql, migration_lock.toml, the _prisma_migrations table), so `prisma migrate deploy` keeps
// working wherever the native engine can be downloaded.
//
//   node scripts/prisma-wasm.mjs migrate            apply pending migrations to DATABASE_DIRECT_URL, or else DATABASE_URL (creates the database if missing)
//   node scripts/prisma-wasm.mjs create <name>      write a new migration folder for the schema's changes (uses a shadow database)
//   node scripts/prisma-wasm.mjs diff               print the SQL from an empty database to the schema
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const schemaPath = join(root, 'prisma', 'schema.prisma');
const migrationsDir = join(root, 'prisma', 'migrations');
const lockfileName = 'migration_lock.toml';
const filters = { externalTables: [], externalEnums: [] };
const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/cardpull';

async function loadEngineModule() {
  // The package's entry imports its .wasm as an ES module, which Node does not do by default:
  // instantiate the .wasm ourselves with the generated bindings as its import object.
  const dir = dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
  const bindings = await import(join(dir, 'schema_engine_bg.js'));
  const { instance } = await WebAssembly.instantiate(readFileSync(join(dir, 'schema_engine_bg.wasm')), {
    './schema_engine_bg.js': bindings,
  });
  bindings.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  return bindings;
}

async function openEngine(databaseUrl, schema) {
  const { SchemaEngine } = await loadEngineModule();
  const { PrismaPg } = require('@prisma/adapter-pg');
  const { bindMigrationAwareSqlAdapterFactory } = require('@prisma/driver-adapter-utils');
  const factory = new PrismaPg({ connectionString: databaseUrl, max: 2 });
  const connect = factory.connect.bind(factory);
  factory.connect = async () => splitScriptsWhole(acceptCharColumns(await connect()));
  const adapter = bindMigrationAwareSqlAdapterFactory(factory);
  const log = (line) => {
    if (process.env.PRISMA_WASM_DEBUG) process.stderr.write(`${line}\n`);
  };
  return SchemaEngine.new({ datamodels: [['schema.prisma', schema]] }, log, adapter);
}

/**
 * The engine reads Postgres catalogs (pg_constraint.contype, ...) whose columns have the internal type
 * "char" (OID 18), which @prisma/adapter-pg 7.10 refuses ("Column type 'char' could not be
 * deserialized"). pg returns those values as one-letter strings already; this wraps the adapter's
 * queryRaw (shared by its transactions) so such columns are reported as Character, as the engine
 * expects. Only this migration tool does this; the application never reads catalogs.
 */
let charPatched = false;
function acceptCharColumns(adapter) {
  if (charPatched) return adapter;
  let proto = Object.getPrototypeOf(adapter);
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'queryRaw')) proto = Object.getPrototypeOf(proto);
  if (!proto || typeof proto.performIO !== 'function') return adapter;
  const queryRaw = proto.queryRaw;
  const performIO = proto.performIO;
  const CHAR_OID = 18;
  const TEXT_OID = 25;
  const CHARACTER_COLUMN = 6; // ColumnTypeEnum.Character of @prisma/driver-adapter-utils
  proto.queryRaw = async function (query) {
    let charColumns = [];
    const self = Object.create(this);
    self.performIO = async (q) => {
      const result = await performIO.call(this, q);
      charColumns = [];
      result.fields.forEach((field, i) => {
        if (field.dataTypeID === CHAR_OID) {
          field.dataTypeID = TEXT_OID;
          charColumns.push(i);
        }
      });
      return result;
    };
    const out = await queryRaw.call(self, query);
    for (const i of charColumns) out.columnTypes[i] = CHARACTER_COLUMN;
    return out;
  };
  charPatched = true;
  return adapter;
}

/**
 * @prisma/adapter-pg 7.10 runs a migration by splitting its script at every ';', inside a function's body
 * (dollar-quoted) too, so a CREATE FUNCTION in PL/pgSQL reached Postgres in pieces ("unterminated
 * dollar-quoted string"). This splits at the semicolons that end statements only: not in quotes, quoted
 * identifiers, dollar-quoted bodies or comments. The native engine sends the script whole.
 */
let scriptsPatched = false;
function splitScriptsWhole(adapter) {
  if (scriptsPatched) return adapter;
  let proto = Object.getPrototypeOf(adapter);
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'executeScript')) proto = Object.getPrototypeOf(proto);
  if (!proto) return adapter;
  proto.executeScript = async function (script) {
    for (const statement of sqlStatements(script)) {
      try {
        await this.client.query(statement);
      } catch (error) {
        this.onError(error);
      }
    }
  };
  scriptsPatched = true;
  return adapter;
}

/** The statements of a SQL script, split at the semicolons outside quotes, dollar quotes and comments. */
export function sqlStatements(script) {
  const out = [];
  let start = 0;
  let i = 0;
  const n = script.length;
  while (i < n) {
    const c = script[i];
    const next = script[i + 1];
    if (c === '-' && next === '-') {
      const end = script.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && next === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (script[i] === '/' && script[i + 1] === '*') (depth++, (i += 2));
        else if (script[i] === '*' && script[i + 1] === '/') (depth--, (i += 2));
        else i++;
      }
    } else if (c === "'" || c === '"') {
      // A quoted string or identifier; a doubled quote stays inside (and E'' strings' \' too).
      const escapes = c === "'" && /[eE]/.test(script[i - 1] ?? '') && !/[A-Za-z0-9_]/.test(script[i - 2] ?? '');
      i++;
      while (i < n) {
        if (escapes && script[i] === '\\') i += 2;
        else if (script[i] === c && script[i + 1] === c) i += 2;
        else if (script[i] === c) break;
        else i++;
      }
      i++;
    } else if (c === '$' && !/[A-Za-z0-9_]/.test(script[i - 1] ?? '')) {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(script.slice(i, i + 64));
      if (tag) {
        const end = script.indexOf(tag[0], i + tag[0].length);
        i = end < 0 ? n : end + tag[0].length;
      } else i++;
    } else if (c === ';') {
      out.push(script.slice(start, i));
      i++;
      start = i;
    } else i++;
  }
  out.push(script.slice(start));
  return out.map((s) => s.trim()).filter((s) => s.length > 0 && !/^(--[^\n]*\n?\s*)+$/.test(s));
}

function readMigrations() {
  const directories = existsSync(migrationsDir)
    ? readdirSync(migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  const lockPath = join(migrationsDir, lockfileName);
  return {
    baseDir: migrationsDir,
    lockfile: { path: lockfileName, content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: directories.map((name) => {
      const file = join(migrationsDir, name, 'migration.sql');
      return {
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: existsSync(file)
            ? { tag: 'ok', value: readFileSync(file, 'utf8') }
            : { tag: 'error', value: `${file} is missing` },
        },
      };
    }),
  };
}

/** Creates the target database when it does not exist (as `prisma migrate deploy` does). */
async function ensureDatabase(databaseUrl, { quiet = false } = {}) {
  const { Client } = require('pg');
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) throw new Error('DATABASE_URL names no database');
  const adminUrl = new URL(databaseUrl);
  adminUrl.pathname = '/postgres';
  const client = new Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      if (!quiet) console.log(`Created database ${name}`);
    }
  } finally {
    await client.end();
  }
}

async function migrate(databaseUrl) {
  await ensureDatabase(databaseUrl);
  const engine = await openEngine(databaseUrl, readFileSync(schemaPath, 'utf8'));
  const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList: readMigrations(), filters });
  const target = new URL(databaseUrl);
  console.log(
    appliedMigrationNames.length
      ? `Applied ${appliedMigrationNames.length} migration(s) to ${target.host}${target.pathname}: ${appliedMigrationNames.join(', ')}`
      : `No pending migrations for ${target.host}${target.pathname}`,
  );
}

async function create(databaseUrl, name) {
  if (!name || !/^[a-z0-9_]+$/.test(name)) {
    throw new Error('usage: create <name>, the name in lower case letters, digits and "_"');
  }
  const schema = readFileSync(schemaPath, 'utf8');
  const files = [{ path: 'schema.prisma', content: schema }];
  // The wasm engine cannot create its own shadow database, so we make one: replay the existing
  // migrations on a throw-away database, then diff that database (reached through the adapter as the
  // schema's datasource) against the schema.
  const shadowUrl = new URL(databaseUrl);
  shadowUrl.pathname = `/cardpull_shadow_${process.pid}_${Date.now()}`;
  await ensureDatabase(shadowUrl.toString(), { quiet: true });
  let script;
  try {
    const engine = await openEngine(shadowUrl.toString(), schema);
    await engine.applyMigrations({ migrationsList: readMigrations(), filters });
    const result = await engine.diff({
      from: { tag: 'schemaDatasource', files, configDir: root },
      to: { tag: 'schemaDatamodel', files },
      script: true,
      exitCode: null,
      shadowDatabaseUrl: null,
      filters,
    });
    script = result.stdout;
    engine.free();
  } finally {
    await dropDatabase(shadowUrl.toString());
  }
  if (!script || /^-- This is an empty migration\.\s*$/.test(script.trim()) || !script.trim()) {
    console.log('The schema has no changes since the last migration: nothing created.');
    return;
  }
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const folderName = `${stamp}_${name}`;
  const folder = join(migrationsDir, folderName);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'migration.sql'), script);
  const lockPath = join(migrationsDir, lockfileName);
  if (!existsSync(lockPath)) {
    writeFileSync(
      lockPath,
      '# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\nprovider = "postgresql"\n',
    );
  }
  console.log(`Created prisma/migrations/${folderName}/migration.sql`);
}

async function dropDatabase(databaseUrl) {
  const { Client } = require('pg');
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const adminUrl = new URL(databaseUrl);
  adminUrl.pathname = '/postgres';
  const client = new Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function diff(databaseUrl) {
  const schema = readFileSync(schemaPath, 'utf8');
  const engine = await openEngine(databaseUrl, schema);
  const result = await engine.diff({
    from: { tag: 'empty' },
    to: { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: schema }] },
    script: true,
    exitCode: null,
    shadowDatabaseUrl: null,
    filters,
  });
  process.stdout.write(result.stdout);
}

const [command, arg] = process.argv.slice(2);
// Migrations take a session advisory lock, which a transaction pooler (PgBouncer) cannot keep: behind one,
// DATABASE_DIRECT_URL names Postgres itself (Prisma's `directUrl`).
const databaseUrl = process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
const commands = { migrate: () => migrate(databaseUrl), create: () => create(databaseUrl, arg), diff: () => diff(databaseUrl) };
if (!commands[command]) {
  console.error('usage: prisma-wasm.mjs migrate | create <name> | diff');
  process.exit(2);
}
commands[command]().then(
  () => process.exit(0),
  (error) => {
    const message = error?.message ?? String(error);
    console.error(`prisma-wasm ${command} failed: ${message}`);
    if (/ECONNREFUSED|connect/i.test(message)) {
      console.error(`Is PostgreSQL running and reachable at ${new URL(databaseUrl).host}? See README.md, "Running it".`);
    }
    process.exit(1);
  },
);
