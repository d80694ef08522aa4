import { Secret, TOTP } from 'otpauth';
import { ERRORS } from '@wallet/platform';
import { startGateway, type StartedGateway } from '@wallet/gateway/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Company = Awaited<ReturnType<Stack['provision']>>;
interface User {
  id: string;
  email: string;
  password: string;
  totpSecret: string;
  token: string;
}

/**
 * Lockouts of dashboard users, through the real gateway, Postgres and Redis (split by what the caller proved: docs/security.md
 * "Operator lockouts and trusted proxies"):
 * - 10 wrong passwords for one e-mail from one client IP in 15 minutes lock that caller out of that
 *   account for 15 minutes; from any other IP the user still signs in (knowing an e-mail must not
 *   be enough to keep its owner out).
 * - 5 wrong TOTP codes (only a session or invitation holder can send one) lock the user for 15
 *   minutes from every IP: signing, rejecting and login.
 * Client IPs come through X-Forwarded-For from the trusted loopback proxy. The per-IP login limit
 * (Authentication, 5/min) is raised on these gateways so that the lockouts answer; a replica with
 * the default limit shows it still stands in front.
 */
describe('dashboard lockouts', () => {
  let stack: Stack;
  let co: Company;
  /** Other replicas on the same database: one locks for 2 s, one counts failures over a 3 s window. */
  let quickLock: StartedGateway;
  let quickWindow: StartedGateway;
  /** The default per-IP login limit (5/min). */
  let strict: StartedGateway;
  let seq = 0;
  let ipSeq = 0;
  /** A client address never used before in this file: a fresh per-IP rate-limit bucket. */
  const nextIp = () => `203.0.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;

  const totp = (u: User) => new TOTP({ secret: Secret.fromBase32(u.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' });
  const code = (u: User, stepOffset = 0) => totp(u).generate({ timestamp: Date.now() + stepOffset * 30_000 });
  /** A code valid in none of the steps the gateway accepts now (±1). */
  function wrongCode(u: User): string {
    const valid = new Set([-2, -1, 0, 1, 2].map((o) => code(u, o)));
    for (let n = 0; ; n++) {
      const c = String(n).padStart(6, '0');
      if (!valid.has(c)) return c;
    }
  }

  async function send(method: string, path: string, opts: { token?: string; body?: unknown; ip?: string; base?: string } = {}) {
    const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? nextIp() };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${opts.base ?? stack.gateway.url}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }
  const login = (email: string, password: string, base?: string, ip?: string) =>
    send('POST', '/auth/login', { body: { email, password }, ...(base ? { base } : {}), ...(ip ? { ip } : {}) });
  const loginFrom = (ip: string, email: string, password: string, base?: string) => login(email, password, base, ip);
  const sign = (u: User, approvalId: string, totpCode: string) =>
    send('POST', `/dashboard/approvals/${approvalId}/sign`, { token: u.token, body: { totpCode } });
  const reject = (u: User, approvalId: string, totpCode: string) =>
    send('POST', `/dashboard/approvals/${approvalId}/reject`, { token: u.token, body: { totpCode, reason: 'prueba' } });

  async function newUser(role: 'ADMIN' | 'OPERATOR' = 'OPERATOR'): Promise<User> {
    const email = `bloqueo${++seq}.${co.id.slice(0, 6)}@empresa.co`;
    const password = `Clave-segura-${seq}-2026`;
    const r = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email, password, role });
    expect(r.status).toBe(201);
    const s = await login(email, password);
    expect(s.status).toBe(200);
    return { id: r.body.id, email, password, totpSecret: r.body.totpSecret, token: s.body.token };
  }

  async function pendingApproval(): Promise<string> {
    const k = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3007770001' } });
    const r = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 1_000,
        destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
        targetName: k.body.recipient.fullName,
        targetDocument: k.body.recipient.idValue,
      },
    });
    expect(r.body.status).toBe('AWAITING_APPROVAL');
    return r.body.approvalId as string;
  }

  function expectLocked(r: { status: number; headers: Headers; body: any }, maxSeconds = 900): void {
    expect({ status: r.status, error: r.body?.error, message: r.body?.message }).toEqual({
      status: 423,
      error: 'ACCOUNT_LOCKED',
      message: ERRORS.ACCOUNT_LOCKED.message,
    });
    const retryAfter = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= maxSeconds).toBe(true);
    expect(r.body.details).toEqual({ retryAfter });
    expect(Object.keys(r.body).sort()).toEqual(['details', 'error', 'message']);
  }

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      gatewayEnv: { RATE_LIMIT_FINANCIAL: '1000', RATE_LIMIT_READS: '10000', RATE_LIMIT_RESOLVE_KEY: '1000', RATE_LIMIT_AUTHENTICATION: '1000' },
    });
    const replica = (name: string, env: Record<string, string>) =>
      startGateway({
        databaseUrl: stack.databaseUrl,
        ledgerAddress: stack.ledger.address,
        namespace: `${stack.namespace}-${name}`,
        env: { LOG_LEVEL: 'silent', GATEWAY_MIGRATE_ON_START: 'false', RATE_LIMIT_PREFIX: `${stack.namespace}-${name}`, ...env },
      });
    quickLock = await replica('lock', { DASHBOARD_LOCKOUT_SECONDS: '2', RATE_LIMIT_AUTHENTICATION: '1000' });
    quickWindow = await replica('window', { DASHBOARD_LOCKOUT_WINDOW_SECONDS: '3', RATE_LIMIT_AUTHENTICATION: '1000' });
    strict = await replica('strict', {});
    co = await stack.provision('Bloqueos S.A.S.');
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { multiSigThreshold: 2 })).status).toBe(200);
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'seed' });
  }, 60_000);
  afterAll(async () => {
    await quickLock?.stop();
    await quickWindow?.stop();
    await strict?.stop();
    await stack?.stop();
  });

  it('10 wrong passwords from one IP lock that IP out of the account (423 with Retry-After, even for the right password); the user signs in from any other IP', async () => {
    const u = await newUser();
    const other = await newUser();
    const attacker = nextIp();
    for (let i = 0; i < 10; i++) {
      const r = await loginFrom(attacker, u.email, `mala-clave-${i}`);
      expect([i, r.status, r.body.error]).toEqual([i, 401, 'INVALID_CREDENTIALS']);
    }
    expectLocked(await loginFrom(attacker, u.email, u.password));
    expectLocked(await loginFrom(attacker, u.email, 'otra-mala-clave'));
    expectLocked(await loginFrom(attacker, `  ${u.email.toUpperCase()} `, u.password)); // the same account however the e-mail is typed
    // The victim, from anywhere else: in (the account used to be locked for everyone).
    expect((await login(u.email, u.password)).status).toBe(200);
    // The attacker's IP is locked out of that account only.
    expect((await loginFrom(attacker, other.email, other.password)).status).toBe(200);
  });

  it('wrong passwords spread over many IPs lock nobody out (each caller gets its own 10)', async () => {
    const u = await newUser();
    for (let i = 0; i < 20; i++) expect((await login(u.email, `mala-clave-${i}`)).status).toBe(401);
    expect((await login(u.email, u.password)).status).toBe(200);
  });

  it('the per-IP limit still stands in front (Authentication class, 5/min): one IP is stopped at the 6th', async () => {
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await send('POST', '/auth/login', { ip, base: strict.url, body: { email: `ip.${co.id}@empresa.co`, password: 'x' } })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('an unknown e-mail locks exactly like a real one (no user enumeration)', async () => {
    const u = await newUser();
    const ghost = `nadie.${Date.now()}@empresa.co`;
    const ip = nextIp();
    for (let i = 0; i < 10; i++) {
      const [real, unknown] = await Promise.all([loginFrom(ip, u.email, `mala-${i}`), loginFrom(ip, ghost, `mala-${i}`)]);
      expect(real.body).toEqual(unknown.body);
      expect(real.status).toBe(401);
    }
    const [real, unknown] = await Promise.all([loginFrom(ip, u.email, 'mala-11'), loginFrom(ip, ghost, 'mala-11')]);
    expectLocked(real);
    expectLocked(unknown);
  });

  it('5 wrong TOTP codes (sign and reject, from 5 IPs) lock signing, rejecting and login; the right code is refused while locked', async () => {
    const approvalId = await pendingApproval();
    const u = await newUser();
    for (let i = 0; i < 5; i++) {
      const r = i % 2 === 0 ? await sign(u, approvalId, wrongCode(u)) : await reject(u, approvalId, wrongCode(u));
      expect([i, r.status, r.body.error]).toEqual([i, 401, 'INVALID_TOTP_CODE']);
    }
    expectLocked(await sign(u, approvalId, code(u)));
    expectLocked(await reject(u, approvalId, code(u)));
    // Login too, from any IP; the lock is told only to whoever gives the right password.
    expectLocked(await login(u.email, u.password));
    expect((await login(u.email, 'clave-equivocada')).body.error).toBe('INVALID_CREDENTIALS');
    // Nothing was signed or decided; reading still works with the session.
    const list = await send('GET', '/dashboard/approvals', { token: u.token });
    expect(list.body.items.find((a: { approvalId: string }) => a.approvalId === approvalId)).toMatchObject({ status: 'PENDING', signatures: [] });
    // Another signer is not affected by u's lock.
    const v = await newUser();
    expect((await sign(v, approvalId, code(v))).status).toBe(200);
  });

  it('a successful login clears the password failures, not the TOTP ones', async () => {
    const approvalId = await pendingApproval();
    const u = await newUser();
    const ip = nextIp();
    for (let i = 0; i < 9; i++) expect((await loginFrom(ip, u.email, `mala-${i}`)).status).toBe(401);
    expect((await loginFrom(ip, u.email, u.password)).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await loginFrom(ip, u.email, `mala-bis-${i}`)).status).toBe(401);
    expect((await loginFrom(ip, u.email, u.password)).status).toBe(200);
    // Knowing the password does not buy more code guesses: 4 wrong codes, a login, the 5th wrong code locks.
    for (let i = 0; i < 4; i++) expect((await sign(u, approvalId, wrongCode(u))).body.error).toBe('INVALID_TOTP_CODE');
    expect((await login(u.email, u.password)).status).toBe(200);
    expect((await sign(u, approvalId, wrongCode(u))).body.error).toBe('INVALID_TOTP_CODE');
    expectLocked(await sign(u, approvalId, code(u)));
  });

  it('parallel wrong attempts check at most the limit: 10 passwords from one IP, 5 codes from as many IPs', async () => {
    const u = await newUser();
    const ip = nextIp();
    const passwords = await Promise.all(Array.from({ length: 25 }, (_, i) => loginFrom(ip, u.email, `paralela-${i}`)));
    expect(passwords.filter((r) => r.status === 401)).toHaveLength(10);
    expect(passwords.filter((r) => r.status === 423)).toHaveLength(15);
    for (const r of passwords.filter((x) => x.status === 423)) expectLocked(r);
    expectLocked(await loginFrom(ip, u.email, u.password));
    expect((await login(u.email, u.password)).status).toBe(200);

    const approvalId = await pendingApproval();
    const v = await newUser();
    const wrong = wrongCode(v);
    const codes = await Promise.all(Array.from({ length: 12 }, () => sign(v, approvalId, wrong)));
    expect(codes.filter((r) => r.status === 401 && r.body.error === 'INVALID_TOTP_CODE')).toHaveLength(5);
    expect(codes.filter((r) => r.status === 423)).toHaveLength(7);
    expectLocked(await sign(v, approvalId, code(v)));
  });

  it('the lock is shared by replicas and ends after DASHBOARD_LOCKOUT_SECONDS; failures older than the window no longer count', async () => {
    const u = await newUser();
    const ip = nextIp();
    for (let i = 0; i < 10; i++) expect((await loginFrom(ip, u.email, `mala-${i}`, quickLock.url)).status).toBe(401);
    const locked = await loginFrom(ip, u.email, u.password, quickLock.url);
    expectLocked(locked, 2);
    expectLocked(await loginFrom(ip, u.email, u.password)); // the other replica: same database, same lock
    await new Promise((r) => setTimeout(r, Number(locked.headers.get('retry-after')) * 1000 + 300));
    expect((await loginFrom(ip, u.email, u.password)).status).toBe(200);

    // A 3 s window: 9 failures, the window passes, 9 more never reach 10.
    const w = await newUser();
    const wip = nextIp();
    for (let i = 0; i < 9; i++) expect((await loginFrom(wip, w.email, `mala-${i}`, quickWindow.url)).status).toBe(401);
    await new Promise((r) => setTimeout(r, 3_300));
    for (let i = 0; i < 9; i++) expect((await loginFrom(wip, w.email, `mala-bis-${i}`, quickWindow.url)).status).toBe(401);
    expect((await loginFrom(wip, w.email, w.password, quickWindow.url)).status).toBe(200);
  }, 30_000);
});
