import { ERRORS } from '@wallet/platform';
import type { StartedGateway } from '../src/testing.js';
import { startStack, type Stack } from './support/stack.js';
import { client, type Client, type Reply } from './support/http.js';
import { newOperator, totpCode, type TestOperator } from './support/operators.js';
import { sql } from './support/sql.js';

/**
 * Operator login lockouts (docs/security.md "Operator lockouts and trusted proxies"), attacked through the real HTTP gateway on real
 * Postgres and Redis. Client IPs come through X-Forwarded-For from the trusted loopback proxy.
 * - Knowing an operator's e-mail must not let anyone keep the operator out: wrong passwords lock
 *   only the caller (per e-mail and client IP), and the per-e-mail throttle is gone.
 * - Wrong TOTP codes after the right password lock the account from every IP (and are audited).
 * - Attempts are counted before they are checked: racing attempts never check more than the limit.
 */
let stack: Stack;
let api: Client;
let token: string;
let ipSeq = 0;
/** A client address never used before in this file. */
const nextIp = () => `198.18.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;

beforeAll(async () => {
  // The per-IP login class is raised here so that the lockouts, not the rate limit, answer.
  stack = await startStack({ RATE_LIMIT_ADMIN_LOGIN: '1000', RATE_LIMIT_ADMIN: '100000' });
  api = client(stack.gw.url);
  token = stack.gw.adminToken;
}, 60_000);
afterAll(() => stack?.stop());

const loginFrom = (ip: string, body: { email: string; password: string; totpCode: string }, g: Client = api) =>
  g.post('/admin/auth/login', { body, headers: { 'x-forwarded-for': ip } });

/** A code valid in none of the steps the gateway accepts now (±1, and the neighbours for safety). */
function wrongCode(op: TestOperator): string {
  const valid = new Set([-2, -1, 0, 1, 2].map((s) => totpCode(op.totpSecret, s)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!valid.has(c)) return c;
  }
}

/**
 * A code of a step later than the one the operator's first login consumed (a step is accepted
 * once; ±1 step is accepted): good for one more successful login per operator in these tests.
 */
const freshCode = (op: TestOperator) => totpCode(op.totpSecret, 1);

const failed = { error: 'OPERATOR_AUTH_FAILED', message: ERRORS.OPERATOR_AUTH_FAILED.message };

function expectLocked(r: Reply): number {
  expect({ status: r.status, error: r.body?.error, message: r.body?.message }).toEqual({
    status: 423,
    error: 'ACCOUNT_LOCKED',
    message: ERRORS.ACCOUNT_LOCKED.message,
  });
  const retryAfter = Number(r.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 900).toBe(true);
  expect(r.body).toEqual({ error: 'ACCOUNT_LOCKED', message: ERRORS.ACCOUNT_LOCKED.message, details: { retryAfter } });
  return retryAfter;
}

describe('operator login: no unauthenticated way to lock an operator out', () => {
  let throttled: StartedGateway;
  beforeAll(async () => {
    // The default login class (5 per minute per client IP), as in production.
    throttled = await stack.extraGateway({ RATE_LIMIT_ADMIN_LOGIN: '5' });
    for (let i = 0; i < 100 && (await fetch(`${throttled.opsUrl}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  });

  it('20 wrong passwords for the victim from IP A (default limits): A is throttled, the victim logs in from IP B', async () => {
    const victim = await newOperator(api, token, 'Victoria');
    const g = client(throttled.url);
    const a = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await loginFrom(a, { email: victim.email, password: `Clave-mala-${i}`, totpCode: '123456' }, g)).status);
    // The caller is throttled per IP (5/min)…
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    // …but the victim is not: no per-e-mail count (it used to answer 429 here).
    const r = await loginFrom(nextIp(), { email: victim.email, password: victim.password, totpCode: freshCode(victim) }, g);
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.token).toMatch(/^wadm_/);
  });

  it('20 wrong passwords from IP A lock A out of that account only (10 checked, then 423); the victim logs in from IP B', async () => {
    const victim = await newOperator(api, token, 'Valeria');
    const a = nextIp();
    const answers: Reply[] = [];
    for (let i = 0; i < 20; i++) answers.push(await loginFrom(a, { email: victim.email, password: `Clave-mala-${i}`, totpCode: '123456' }));
    expect(answers.map((r) => r.status)).toEqual([...Array(10).fill(401), ...Array(10).fill(423)]);
    for (const r of answers.slice(0, 10)) expect(r.body).toEqual(failed);
    for (const r of answers.slice(10)) expectLocked(r);
    // From A even the right credentials wait (the attacker may have guessed right at the 11th try)…
    expectLocked(await loginFrom(a, { email: victim.email, password: victim.password, totpCode: freshCode(victim) }));
    // …however the e-mail is typed.
    expectLocked(await loginFrom(a, { email: `  ${victim.email.toUpperCase()} `, password: victim.password, totpCode: freshCode(victim) }));
    // From anywhere else the victim logs in.
    const b = await loginFrom(nextIp(), { email: victim.email, password: victim.password, totpCode: freshCode(victim) });
    expect(b.status).toBe(200);
    // Another operator from A is not affected either.
    const other = await newOperator(api, token, 'Otro');
    expect((await loginFrom(a, { email: other.email, password: other.password, totpCode: freshCode(other) })).status).toBe(200);
    // The lock was audited on the attempt that set it (caller scope, password factor).
    const rows = await sql(
      stack.db.url,
      `select * from gateway.admin_audit where action = 'adminLogin' and targets->>'operatorId' = $1 and after ? 'lockout'`,
      [victim.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      outcome: 'FAILED',
      error_code: 'OPERATOR_AUTH_FAILED',
      client_ip: a,
      after: { lockout: { scope: 'caller', factor: 'password', lockedForSeconds: 900 } },
    });
    expect(JSON.stringify(rows[0])).not.toContain('Clave-mala');
  });

  it('an unknown e-mail is counted and locked exactly like a real one (no enumeration)', async () => {
    const real = await newOperator(api, token, 'Real');
    const ghost = `nadie.${Date.now()}@billetera.co`;
    const ip = nextIp();
    for (let i = 0; i < 11; i++) {
      const [r, u] = [
        await loginFrom(ip, { email: real.email, password: `mala-${i}`, totpCode: '123456' }),
        await loginFrom(ip, { email: ghost, password: `mala-${i}`, totpCode: '123456' }),
      ];
      const shape = (x: Reply) => ({
        status: x.status,
        error: x.body.error,
        message: x.body.message,
        keys: Object.keys(x.body).sort(),
        retryAfter: x.headers.get('retry-after') !== null,
      });
      expect(shape(u)).toEqual(shape(r));
      expect(r.status).toBe(i < 10 ? 401 : 423);
    }
  });
});

describe('operator login: wrong codes after the right password lock the account from every IP', () => {
  it('5 wrong TOTP codes with the password (from 5 IPs) → 423 from any IP, even with the right code; audited and counted', async () => {
    const victim = await newOperator(api, token, 'Tomasa');
    const metricBefore = await lockoutMetric('account', 'totp');
    for (let i = 0; i < 5; i++) {
      const r = await loginFrom(nextIp(), { email: victim.email, password: victim.password, totpCode: wrongCode(victim) });
      expect([i, r.status, r.body]).toEqual([i, 401, failed]);
    }
    const locked = await loginFrom(nextIp(), { email: victim.email, password: victim.password, totpCode: freshCode(victim) });
    expectLocked(locked);
    // The lock is told only to whoever gives the right password: a wrong one reads as always.
    const wrongPassword = await loginFrom(nextIp(), { email: victim.email, password: 'Clave-equivocada-1', totpCode: freshCode(victim) });
    expect([wrongPassword.status, wrongPassword.body]).toEqual([401, failed]);
    // Sessions opened before stay valid (the lock is about signing in).
    expect((await api.get('/admin/auth/me', { token: victim.session })).status).toBe(200);
    const rows = await sql(
      stack.db.url,
      `select * from gateway.admin_audit where action = 'adminLogin' and targets->>'operatorId' = $1 and after ? 'lockout'`,
      [victim.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].after).toEqual({ lockout: { scope: 'account', factor: 'totp', lockedForSeconds: 900 } });
    const refused = await sql(
      stack.db.url,
      `select count(*)::int as n from gateway.admin_audit where action = 'adminLogin' and targets->>'operatorId' = $1 and error_code = 'ACCOUNT_LOCKED'`,
      [victim.id],
    );
    expect(refused[0].n).toBe(1);
    expect(await lockoutMetric('account', 'totp')).toBe(metricBefore + 1);
  });

  it('a replayed code counts as a wrong one', async () => {
    const op = await newOperator(api, token, 'Repetida');
    for (let i = 0; i < 5; i++) expect((await loginFrom(nextIp(), { email: op.email, password: op.password, totpCode: op.firstCode })).status).toBe(401);
    expectLocked(await loginFrom(nextIp(), { email: op.email, password: op.password, totpCode: freshCode(op) }));
  });
});

describe('operator login: racing attempts are counted before they are checked', () => {
  it('30 parallel wrong passwords from one IP: exactly 10 are checked (401), 20 find the caller locked (423)', async () => {
    const op = await newOperator(api, token, 'Carrera');
    const ip = nextIp();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => loginFrom(ip, { email: op.email, password: `paralela-${i}`, totpCode: '123456' })));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 423)).toHaveLength(20);
    for (const r of answers.filter((x) => x.status === 423)) expectLocked(r);
  });

  it('30 parallel right passwords with wrong codes from 30 IPs: exactly 5 codes are checked (401), 25 find the account locked (423)', async () => {
    const op = await newOperator(api, token, 'Carrera TOTP');
    const wrong = wrongCode(op);
    const answers = await Promise.all(Array.from({ length: 30 }, () => loginFrom(nextIp(), { email: op.email, password: op.password, totpCode: wrong })));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 423)).toHaveLength(25);
    expectLocked(await loginFrom(nextIp(), { email: op.email, password: op.password, totpCode: freshCode(op) }));
  });
});

async function lockoutMetric(scope: string, factor: string): Promise<number> {
  const text = await (await fetch(`${stack.gw.opsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('gateway_auth_lockouts_total{') && l.includes('surface="operator"') && l.includes(`scope="${scope}"`) && l.includes(`factor="${factor}"`),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}
