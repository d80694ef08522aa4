import { parsePgUrl } from './primary-host.js';

describe('parsePgUrl: libpq connection URLs, several hosts included', () => {
  it('one host: the same URL, port 5432 when none is given', () => {
    expect(parsePgUrl('postgresql://postgres@127.0.0.1:5432/postgres')).toEqual({
      hosts: [{ host: '127.0.0.1', port: 5432 }],
      sessionAttrs: 'any',
      firstHostUrl: 'postgresql://postgres@127.0.0.1:5432/postgres',
    });
    expect(parsePgUrl('postgres://db/wallet').hosts).toEqual([{ host: 'db', port: 5432 }]);
  });

  it('several hosts, each with its port or the default; credentials and other parameters kept; target_session_attrs taken out', () => {
    expect(parsePgUrl('postgresql://wallet:s%40cret@db-a:5433,db-b,[::1]:6432/wallet?sslmode=require&target_session_attrs=read-write')).toEqual({
      hosts: [
        { host: 'db-a', port: 5433 },
        { host: 'db-b', port: 5432 },
        { host: '::1', port: 6432 },
      ],
      sessionAttrs: 'read-write',
      firstHostUrl: 'postgresql://wallet:s%40cret@db-a:5433/wallet?sslmode=require',
    });
    expect(parsePgUrl('postgresql://u@[::1]:5433,h/d?target_session_attrs=primary')).toMatchObject({
      sessionAttrs: 'read-write',
      firstHostUrl: 'postgresql://u@[::1]:5433/d',
    });
  });

  it('refuses what is not one, without echoing it (it may hold a password)', () => {
    for (const bad of [
      'mysql://u:pw@h/d',
      'postgresql://u:pw@h:99999/d',
      'postgresql://u:pw@h,,g/d',
      'postgresql://u:pw@h:port/d',
      'postgresql://u:pw@h/d?target_session_attrs=standby',
    ]) {
      let message = '';
      try {
        parsePgUrl(bad);
      } catch (err) {
        message = (err as Error).message;
      }
      expect({ bad, refused: message !== '' }).toEqual({ bad, refused: true });
      expect(message).not.toContain('pw');
    }
  });
});
