/**
 * `npm run admin:hash-password [-- <name> [viewer]]`: the stored form of an operator's password for
 * ADMIN_USERS (scrypt; plain passwords are refused with PARTNER_ENV=production). The password is read from
 * the terminal without echo (twice), or from the first line of stdin when piped, never from the command
 * line (it would stay in the shell history and the process list).
 *
 *   $ npm run admin:hash-password -- alice
 *   ADMIN_USERS entry: alice:scrypt$...$...
 */
import { ADMIN_USER_NAME, hashAdminPassword } from '@cardpull/config';

const MIN_LENGTH = 8;

/** The ADMIN_USERS entry (or just the hash without a name); throws with a message for bad input. */
export function adminUserEntry(password: string, name?: string, role?: string): string {
  if (password.length < MIN_LENGTH) throw new Error(`the password must have at least ${MIN_LENGTH} characters`);
  if (name !== undefined && !ADMIN_USER_NAME.test(name)) throw new Error('the user name may use letters, digits, "_", ".", "@" and "-" (at most 64)');
  if (role !== undefined && role !== 'viewer' && role !== 'admin') throw new Error('the role is "admin" (the default) or "viewer"');
  const hash = hashAdminPassword(password);
  if (name === undefined) return hash;
  return role === 'viewer' ? `${name}:${hash}:viewer` : `${name}:${hash}`;
}

function readHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(new Error('cancelled'));
          return;
        }
        value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
      }
    };
    process.stderr.write(prompt);
    stdin.setEncoding('utf8');
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

async function readPiped(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text.split(/\r?\n/)[0] ?? '';
}

async function main(): Promise<void> {
  const [name, role] = process.argv.slice(2);
  let password: string;
  if (process.stdin.isTTY) {
    password = await readHidden('Password: ');
    if ((await readHidden('Again: ')) !== password) throw new Error('the two passwords differ');
  } else {
    password = await readPiped();
  }
  const entry = adminUserEntry(password, name, role);
  process.stdout.write(name === undefined ? `${entry}\n` : `ADMIN_USERS entry: ${entry}\n`);
}

if (require.main === module) {
  main().catch((error: Error) => {
    process.stderr.write(`admin:hash-password: ${error.message}\n`);
    process.exit(1);
  });
}
