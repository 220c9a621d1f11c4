import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { CLIENT_VERSION } from '@cardpull/client';

const ROOT = join(__dirname, '..', '..');
const PACKAGE = join(ROOT, 'libs', 'client');

describe('libs/client is a package of its own (@cardpull/client): no dependency, nothing of the repository', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'client-package-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('its sources import only Node built-ins (node:*) and each other', () => {
    const src = join(PACKAGE, 'src');
    const files = readdirSync(src).filter((f) => f.endsWith('.ts'));
    expect(files).toEqual(expect.arrayContaining(['index.ts', 'client.ts', 'errors.ts', 'callbacks.ts', 'api-types.ts']));
    const imports = files.flatMap((f) => ts.preProcessFile(readFileSync(join(src, f), 'utf8'), true, true).importedFiles.map((i) => `${f}: ${i.fileName}`));
    expect(imports.length).toBeGreaterThan(5);
    expect(imports.filter((i) => !/: (node:[a-z_]+|\.\/[a-z-]+)$/.test(i))).toEqual([]);
  });

  it('its package.json has no dependency, says Node 20+, ships dist, the OpenAPI document and the README; its version is the User-Agent\'s', () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('@cardpull/client');
    expect(pkg.version).toBe(CLIENT_VERSION);
    expect([pkg.dependencies, pkg.peerDependencies, pkg.optionalDependencies]).toEqual([undefined, undefined, undefined]);
    expect(pkg.engines).toEqual({ node: '>=20' });
    expect(pkg.files).toEqual(['dist', 'openapi.json', 'README.md']);
    expect(readFileSync(join(PACKAGE, 'README.md'), 'utf8')).toContain('npm install @cardpull/client');
  });

  it('builds alone with its own tsconfig (no path of the repository) and is required by its name from another project', () => {
    const dist = join(tmp, 'project', 'node_modules', '@cardpull', 'client');
    const build = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(PACKAGE, 'tsconfig.json'), '--outDir', join(dist, 'dist')], { encoding: 'utf8' });
    expect([build.status, build.stdout, build.stderr]).toEqual([0, '', '']);
    for (const f of ['package.json', 'openapi.json', 'README.md']) cpSync(join(PACKAGE, f), join(dist, f));
    expect(readdirSync(join(dist, 'dist')).sort()).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'client.d.ts']));
    mkdirSync(join(tmp, 'project', 'app'), { recursive: true });
    writeFileSync(
      join(tmp, 'project', 'app', 'use.js'),
      `const c = require('@cardpull/client');
const client = new c.CardpullClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });
const e = c.errorFromAnswer(404, { errors: [{ code: 'order_not_found', message: 'm' }], status: 'not_found' });
const doc = require('@cardpull/client/openapi.json');
console.log(JSON.stringify([typeof client.createOrder, e instanceof c.OrderNotFoundError, e instanceof c.CardpullError, typeof c.verifyCallback, doc.info.title]));
`,
    );
    const run = spawnSync(process.execPath, [join(tmp, 'project', 'app', 'use.js')], { encoding: 'utf8', cwd: join(tmp, 'project') });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(['function', true, true, 'function', 'cardpull internal API']);
  });
});
