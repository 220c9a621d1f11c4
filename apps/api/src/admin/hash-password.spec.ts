import { isPlainPassword, loadServiceConfig, verifyAdminPassword } from '@cardpull/config';
import { adminUserEntry } from './hash-password';

describe('npm run admin:hash-password: an ADMIN_USERS entry that logs in with the password', () => {
  it('is accepted by ADMIN_USERS as a hash (not a plain password) and verifies the password only', () => {
    const entries = [adminUserEntry('correct horse battery', 'alice'), adminUserEntry('staple viewer pass', 'victor', 'viewer')];
    const config = loadServiceConfig({ CARDPULL_PROFILE: 'local', ADMIN_USERS: entries.join(',') });
    const [alice, victor] = config.ADMIN_USERS;
    expect(alice).toMatchObject({ name: 'alice', role: 'admin' });
    expect(victor).toMatchObject({ name: 'victor', role: 'viewer' });
    expect(config.ADMIN_USERS.some(isPlainPassword)).toBe(false);
    expect(verifyAdminPassword(alice!, 'correct horse battery')).toBe(true);
    expect(verifyAdminPassword(alice!, 'correct horse batterY')).toBe(false);
  });

  it('refuses short passwords and malformed names or roles', () => {
    expect(() => adminUserEntry('short')).toThrow(/at least 8/);
    expect(() => adminUserEntry('long enough', 'bad name')).toThrow(/user name/);
    expect(() => adminUserEntry('long enough', 'bob', 'root')).toThrow(/role/);
    expect(adminUserEntry('long enough')).toMatch(/^scrypt\$[^$]+\$[^$]+$/);
  });
});
