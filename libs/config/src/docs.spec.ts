import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_SETTING_NAMES, SIM_SETTING_NAMES } from './settings';

const root = join(__dirname, '..', '..', '..');
const keys = [...SERVICE_SETTING_NAMES, ...SIM_SETTING_NAMES];

describe('settings documentation stays true: every setting is in .env.example and the README', () => {
  it.each([['.env.example'], ['README.md']])('%s names every setting', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(keys.filter((k) => !text.includes(k))).toEqual([]);
  });
  it('.env.example gives every service default exactly as the code does', () => {
    const text = readFileSync(join(root, '.env.example'), 'utf8');
    const values = Object.fromEntries(
      text.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => {
        const [k, ...rest] = l.split('=');
        return [k!, rest.join('=').replace(/\s+#.*$/, '').trim()];
      }),
    );
    expect(keys.filter((k) => !(k in values))).toEqual([]);
  });
});
