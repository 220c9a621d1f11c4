import { z } from 'zod';
import { hashAdminPassword, parseAdminUsers, verifyAdminPassword } from './admin-users';

const parse = (raw: string) => z.string().transform((v, ctx) => parseAdminUsers(v, ctx)).safeParse(raw);

describe('ADMIN_USERS: a malformed scrypt entry is refused at start-up, never a door that opens for any password', () => {
  it.each([
    ['alice:scrypt$$', 'empty salt and hash'],
    ['alice:scrypt$c2FsdA==$', 'empty hash'],
    ['alice:scrypt$$aGFzaGhhc2hoYXNoaGFzaA==', 'empty salt'],
    ['alice:scrypt$not base64!$aGFzaA==', 'salt not base64'],
    ['alice:scrypt$AAAAAAAAAAAAAAAAAAAAAA==$AAAA', 'hash shorter than 16 bytes'],
  ])('%s (%s) is refused with a message naming the user', (entry) => {
    const result = parse(entry);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message).join(' ')).toContain('"alice": malformed scrypt hash');
  });

  it('a well-formed hash is accepted, and checks the password', () => {
    const result = parse(`alice:${hashAdminPassword('correct horse')}`);
    expect(result.success).toBe(true);
    const [alice] = result.data!;
    expect(verifyAdminPassword(alice!, 'correct horse')).toBe(true);
    expect(verifyAdminPassword(alice!, 'wrong')).toBe(false);
  });

  it('a malformed hash that reaches the check anyway accepts no password', () => {
    expect(verifyAdminPassword({ name: 'alice', secret: 'scrypt$$', role: 'admin' }, 'anything')).toBe(false);
    expect(verifyAdminPassword({ name: 'alice', secret: 'scrypt$$', role: 'admin' }, '')).toBe(false);
  });
});
