import { AppError, createLogger, Database } from '@wallet/platform';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { DashboardLockouts, SignInLockouts, type AuthFactor } from '../src/auth/dashboard-lockouts.js';
import { gatewayMigrations } from '../src/persistence/migrations/index.js';
import { sql } from './support/sql.js';

/**
 * The lockout counter on real Postgres, where the gateway's HTTP tests cannot see it: how many
 * secrets were actually CHECKED when attempts race. A counter that checked first and counted after
 * would answer the same 401/423 mix over HTTP, yet let every racing guess be tried.
 */
describe('DashboardLockouts (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let lockouts: DashboardLockouts;
  const log = createLogger('lockout-test', 'silent');

  beforeAll(async () => {
    tdb = await createTestDatabase('gwlock');
    db = await Database.open({ url: tdb.url, schema: 'gateway', migrations: gatewayMigrations, logger: log, poolMax: 20 });
    await db.migrate();
    lockouts = new DashboardLockouts(db, 'lockout-test-pepper', { windowSeconds: 900, lockSeconds: 900 }, log);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  /** N attempts at once, each holding its check for a while (as argon2 does); how many checks ran, and what each got. */
  async function race(factor: AuthFactor, email: string, n: number, clientIp = '198.51.100.1', on = lockouts) {
    let checked = 0;
    const outcomes = await Promise.all(
      Array.from({ length: n }, () =>
        on
          .attempt(
            factor,
            email,
            async () => {
              checked++;
              await new Promise((r) => setTimeout(r, 50));
              return undefined;
            },
            { clientIp },
          )
          .then(
            () => 'wrong',
            (err: unknown) => (err instanceof AppError ? err.code : String(err)),
          ),
      ),
    );
    return { checked, outcomes };
  }

  it.each([
    ['password', 10],
    ['totp', 5],
  ] as const)('%s: of 30 racing wrong attempts (one IP) exactly %i are checked, the rest are ACCOUNT_LOCKED', async (factor, limit) => {
    const { checked, outcomes } = await race(factor, `carrera.${factor}@empresa.co`, 30);
    expect(checked).toBe(limit);
    expect(outcomes.filter((o) => o === 'wrong')).toHaveLength(limit);
    expect(outcomes.filter((o) => o === 'ACCOUNT_LOCKED')).toHaveLength(30 - limit);
  });

  it('wrong passwords lock the caller (e-mail, IP), not the account: another IP is still checked; wrong codes lock the account from every IP', async () => {
    const email = 'victima@empresa.co';
    const fromA = await race('password', email, 20, '203.0.113.10');
    expect(fromA.checked).toBe(10);
    expect(fromA.outcomes.filter((o) => o === 'ACCOUNT_LOCKED')).toHaveLength(10);
    // The owner, from elsewhere: checked, and the right password passes.
    await expect(lockouts.attempt('password', email, async () => 'ok', { clientIp: '203.0.113.11' })).resolves.toBe('ok');
    await expect(lockouts.assertNotLocked(email)).resolves.toBeUndefined();
    // Still locked for A, whatever A sends.
    await expect(lockouts.attempt('password', email, async () => 'ok', { clientIp: '203.0.113.10' })).rejects.toMatchObject({ code: 'ACCOUNT_LOCKED' });
    // Codes: per account, from any IP.
    let events = 0;
    for (let i = 0; i < 5; i++)
      await lockouts.attempt('totp', email, async () => undefined, {
        clientIp: `203.0.113.${20 + i}`,
        onLocked: (e) => {
          events++;
          expect(e).toEqual({ surface: 'dashboard', factor: 'totp', scope: 'account', lockSeconds: 900 });
        },
      });
    expect(events).toBe(1);
    await expect(lockouts.assertNotLocked(email)).rejects.toMatchObject({ code: 'ACCOUNT_LOCKED', details: { retryAfter: expect.any(Number) } });
  });

  it('operators and dashboard users keep separate rows for the same e-mail', async () => {
    const operators = new SignInLockouts(db, 'lockout-test-pepper', { windowSeconds: 900, lockSeconds: 900 }, log, 'operator');
    const email = 'compartida@empresa.co';
    await race('totp', email, 5, undefined, operators);
    await expect(operators.assertNotLocked(email)).rejects.toMatchObject({ code: 'ACCOUNT_LOCKED' });
    await expect(lockouts.assertNotLocked(email)).resolves.toBeUndefined();
    expect(operators.subject(email)).not.toBe(lockouts.subject(email));
    expect(operators.callerSubject(email, '198.51.100.1')).not.toBe(lockouts.callerSubject(email, '198.51.100.1'));
  });

  it('stores neither the e-mail nor the IP nor anything derived without the pepper; one row per e-mail however it is typed', async () => {
    await race('password', 'Mixto@Empresa.CO ', 1);
    await race('password', 'mixto@empresa.co', 1);
    const rows = await sql<{ subject: string; n: number }>(
      tdb.url,
      `select subject, cardinality(password_failures) as n from gateway.dashboard_lockouts where subject = $1`,
      [lockouts.callerSubject('mixto@empresa.co', '198.51.100.1')],
    );
    expect(rows).toEqual([{ subject: expect.stringMatching(/^[0-9a-f]{64}$/), n: 2 }]);
    const all = JSON.stringify(await sql(tdb.url, 'select * from gateway.dashboard_lockouts'));
    expect(all).not.toMatch(/empresa|198\.51|203\.0/i);
  });

  it('a right secret while locked is not checked and does not clear the failures', async () => {
    const email = 'bloqueada@empresa.co';
    await race('totp', email, 5);
    let checked = false;
    await expect(
      lockouts.attempt('totp', email, async () => {
        checked = true;
        return true;
      }),
    ).rejects.toMatchObject({ code: 'ACCOUNT_LOCKED', details: { retryAfter: expect.any(Number) } });
    expect(checked).toBe(false);
    const [row] = await sql(
      tdb.url,
      'select cardinality(totp_failures) as n, locked_until > now() as locked from gateway.dashboard_lockouts where subject = $1',
      [lockouts.subject(email)],
    );
    expect(row).toEqual({ n: 5, locked: true });
  });

  it('the purge keeps locks in force and failures inside the window, and drops the rest', async () => {
    const live = 'viva@empresa.co';
    const stale = 'vieja@empresa.co';
    await race('password', live, 1);
    await race('password', stale, 1);
    await sql(
      tdb.url,
      `update gateway.dashboard_lockouts set updated_at = now() - interval '1 hour', password_failures = array[now() - interval '1 hour'] where subject = $1`,
      [lockouts.callerSubject(stale, '198.51.100.1')],
    );
    await lockouts.purge();
    const left = (await sql<{ subject: string }>(tdb.url, 'select subject from gateway.dashboard_lockouts')).map((r) => r.subject);
    expect(left).toContain(lockouts.callerSubject(live, '198.51.100.1'));
    expect(left).toContain(lockouts.subject('bloqueada@empresa.co'));
    expect(left).not.toContain(lockouts.callerSubject(stale, '198.51.100.1'));
  });
});
