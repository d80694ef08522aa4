import { Secret, TOTP } from 'otpauth';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Company = Awaited<ReturnType<Stack['provision']>>;
interface User {
  id: string;
  email: string;
  role: string;
  totpSecret: string;
  password: string;
  token: string;
}

/**
 * Multi-signature approvals through the real gateway (users, sessions, TOTP), transfer service,
 * ledger and sandbox rail (CONTRACT §2/§4/§5, §3.1).
 */
describe('dashboard: users, sessions and multi-signature approvals', () => {
  let stack: Stack;
  let co: Company;
  let seq = 0;

  /** A TOTP code of the user's secret for a time step relative to now (each code is accepted once). */
  const code = (u: User, stepOffset = 0) =>
    new TOTP({ secret: Secret.fromBase32(u.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + stepOffset * 30_000 });

  async function newUser(company: Company, role: 'ADMIN' | 'OPERATOR' | 'VIEWER', login = true): Promise<User> {
    const email = `usuario${++seq}.${company.id.slice(0, 6)}@empresa.co`;
    const password = `Clave-segura-${seq}-2026`;
    const r = await stack.admin('POST', `/admin/companies/${company.id}/users`, { email, password, role });
    expect(r.status).toBe(201);
    const user: User = { ...r.body, password, token: '' };
    if (login) {
      const s = await stack.http('POST', '/auth/login', { body: { email, password } });
      expect(s.status).toBe(200);
      user.token = s.body.token;
    }
    return user;
  }

  const tx = (id: string, key = co.readKey) => stack.http('GET', `/wallets/transactions/${id}`, { token: key });
  const balance = async (c = co) => {
    const r = await stack.http('GET', '/wallets/balance', { token: c.readKey });
    return r.body.wallets.find((w: { rail: string }) => w.rail === 'BREB');
  };
  async function sendAwaiting(c: Company, amount: number, extra: Record<string, unknown> = {}) {
    const k = await stack.http('POST', '/transfers/resolve-key', { token: c.writeKey, body: { keyValue: '3007770001' } });
    const body = {
      amount,
      destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
      targetName: k.body.recipient.fullName,
      targetDocument: k.body.recipient.idValue,
      ...extra,
    };
    const r = await stack.http('POST', '/transfers/send', { token: c.writeKey, body });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('AWAITING_APPROVAL');
    return { ...r.body, request: body };
  }
  const sign = (u: User, approvalId: string, totpCode = code(u)) =>
    stack.http('POST', `/dashboard/approvals/${approvalId}/sign`, { token: u.token, body: { totpCode } });
  const reject = (u: User, approvalId: string, reason?: string, totpCode = code(u)) =>
    stack.http('POST', `/dashboard/approvals/${approvalId}/reject`, { token: u.token, body: { totpCode, ...(reason ? { reason } : {}) } });
  const pending = (u: User, status = 'PENDING') => stack.http('GET', `/dashboard/approvals?status=${status}`, { token: u.token });
  const settled = (id: string, states = ['COMPLETED', 'FAILED', 'EXPIRED']) =>
    eventually(
      async () => {
        const r = await tx(id);
        return states.includes(r.body?.status) ? r.body : undefined;
      },
      15_000,
      100,
    );

  // ---- bulk payouts of a multi-signature company ----
  type Wallets = Record<'BREB' | 'ACH', { availableCents: string; pendingOutCents: string }>;
  const wallets = async (c: Company): Promise<Wallets> => {
    const r = await stack.http('GET', '/wallets/balance', { token: c.readKey });
    return Object.fromEntries(r.body.wallets.map((w: { rail: string }) => [w.rail, w])) as Wallets;
  };
  async function multiSigCompany(name: string): Promise<Company> {
    const c = await stack.provision(name);
    expect((await stack.admin('PATCH', `/admin/companies/${c.id}`, { multiSigThreshold: 2 })).status).toBe(200);
    for (const rail of ['BREB', 'ACH']) {
      expect(
        (await stack.admin('POST', `/admin/companies/${c.id}/wallets/${rail}/credit`, { amountCents: 1_000_000, reference: `seed-${rail}` })).status,
      ).toBeLessThan(300);
    }
    return c;
  }
  /** Two Bre-B lines and one ACH line, executed: 202 AWAITING_APPROVAL with its approval. */
  async function awaitingBatch(c: Company, reference: string) {
    const k = await stack.http('POST', '/transfers/resolve-key', { token: c.writeKey, body: { keyValue: '3007770003' } });
    const breb = (amount: number, ref: string) => ({
      amount,
      reference: ref,
      destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
      targetName: k.body.recipient.fullName,
      targetDocument: k.body.recipient.idValue,
    });
    const ach = {
      amount: 35_000,
      reference: 'L3',
      destination: {
        bankAccount: {
          bankId: 1,
          accountTypeId: 20,
          accountNumber: '12345678901',
          documentTypeId: 1,
          documentNumber: '1020304050',
          holderFirstName: 'Ana',
          holderLastName: 'Pérez',
        },
      },
    };
    const created = await stack.http('POST', '/transfers/batches', {
      token: c.writeKey,
      body: { reference, items: [breb(10_000, 'L1'), breb(20_000, 'L2'), ach] },
    });
    expect([created.status, created.body.status]).toEqual([201, 'VALIDATED']);
    const ex = await stack.http('POST', `/transfers/batches/${created.body.id}/execute`, { token: c.writeKey });
    expect(ex.status).toBe(202);
    expect(ex.body).toMatchObject({ status: 'AWAITING_APPROVAL', threshold: 2, approval: { status: 'PENDING', threshold: 2, signatures: [] } });
    return ex.body;
  }
  /** Leaves no hold behind (the invariants are checked after each test). */
  async function rejectToRelease(c: Company, batchId: string) {
    const u = await newUser(c, 'ADMIN');
    const r = await stack.http('POST', `/dashboard/batches/${batchId}/reject`, { token: u.token, body: { totpCode: code(u) } });
    expect(r.status).toBe(200);
    await eventually(
      async () => ((await stack.http('GET', `/transfers/batches/${batchId}`, { token: c.readKey })).body.progress.finished === 3 ? true : undefined),
      15_000,
      100,
    );
  }

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      gatewayEnv: { RATE_LIMIT_AUTHENTICATION: '1000', RATE_LIMIT_FINANCIAL: '1000', RATE_LIMIT_READS: '10000', RATE_LIMIT_RESOLVE_KEY: '1000' },
    });
    co = await stack.provision('Firmas S.A.S.');
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { multiSigThreshold: 2 })).status).toBe(200);
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'seed' });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
  });

  it('admin creates users with a TOTP secret shown once; bad input, duplicates, unknown companies and API keys are refused', async () => {
    const u = await newUser(co, 'OPERATOR', false);
    expect(u).toMatchObject({ role: 'OPERATOR', disabledAt: null });
    expect(u.totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    expect((await stack.admin('GET', `/admin/companies/${co.id}/users`)).body.items.find((x: User) => x.id === u.id)).toEqual({
      id: u.id,
      email: u.email,
      role: 'OPERATOR',
      createdAt: expect.any(String),
      activatedAt: expect.any(String),
      disabledAt: null,
    });
    const r = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email: 'Nuevo@Empresa.co', password: 'Clave-muy-segura-1', role: 'VIEWER' });
    expect(r.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/.*secret=/);
    expect(r.body.email).toBe('nuevo@empresa.co');
    const dup = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email: 'nuevo@empresa.co', password: 'Clave-muy-segura-1', role: 'VIEWER' });
    expect(dup.status).toBe(400);
    expect(dup.body.details.fields[0].path).toBe('email');
    for (const bad of [
      { email: 'no-es-correo', password: 'Clave-muy-segura-1', role: 'VIEWER' },
      { email: 'a@b.co', password: 'corta', role: 'VIEWER' },
      { email: 'a@b.co', password: 'Clave-muy-segura-1', role: 'ROOT' },
      { email: 'a@b.co', password: 12345678901234, role: 'VIEWER' },
      { email: 'a@b.co', password: 'x'.repeat(200), role: 'VIEWER' },
      { email: 'a@b.co', role: 'VIEWER' },
    ]) {
      const b = await stack.admin('POST', `/admin/companies/${co.id}/users`, bad);
      expect([b.status, b.body.error]).toEqual([400, 'INVALID_REQUEST']);
    }
    expect(
      (
        await stack.admin('POST', '/admin/companies/6f1c2c1e-0000-4000-8000-000000000001/users', {
          email: 'z@b.co',
          password: 'Clave-muy-segura-1',
          role: 'VIEWER',
        })
      ).body.error,
    ).toBe('COMPANY_NOT_FOUND');
    const withKey = await stack.http('POST', `/admin/companies/${co.id}/users`, {
      token: co.writeKey,
      body: { email: 'k@b.co', password: 'Clave-muy-segura-1', role: 'VIEWER' },
    });
    expect([withKey.status, withKey.body.error]).toEqual([403, 'API_KEY_AUTH_NOT_ALLOWED']);
  });

  it('login: a session token; wrong password and unknown e-mail get the same 401; API keys and garbage tokens are refused', async () => {
    const u = await newUser(co, 'ADMIN');
    expect(u.token).toMatch(/^wsess_[0-9A-Za-z]{43}$/);
    const me = await stack.http('GET', '/auth/me', { token: u.token });
    expect(me.body).toMatchObject({ id: u.id, email: u.email, role: 'ADMIN', companyId: co.id, companyName: 'Firmas S.A.S.' });
    const wrong = await stack.http('POST', '/auth/login', { body: { email: u.email, password: 'otra-clave-123' } });
    const unknown = await stack.http('POST', '/auth/login', { body: { email: 'nadie@empresa.co', password: 'otra-clave-123' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error).toBe('INVALID_CREDENTIALS');
    expect((await stack.http('POST', '/auth/login', { token: co.writeKey, body: { email: u.email, password: u.password } })).body.error).toBe(
      'API_KEY_AUTH_NOT_ALLOWED',
    );
    expect((await stack.http('GET', '/dashboard/approvals', { token: co.readKey })).body.error).toBe('API_KEY_AUTH_NOT_ALLOWED');
    expect((await stack.http('GET', '/dashboard/approvals')).body.error).toBe('AUTH_REQUIRED');
    expect((await stack.http('GET', '/dashboard/approvals', { token: 'wsess_nope' })).status).toBe(401);
    expect((await stack.http('GET', '/dashboard/approvals', { token: `wsess_${'A'.repeat(43)}` })).body.error).toBe('SESSION_EXPIRED');
    const bad = await stack.http('POST', '/auth/login', { body: { email: u.email } });
    expect(bad.body.error).toBe('INVALID_REQUEST');
    expect(JSON.stringify(bad.body)).not.toContain(u.password);
  });

  it("GET /auth/me answers the session's user and company; POST /auth/logout answers 204 with no body", async () => {
    const u = await newUser(co, 'VIEWER');
    const me = await stack.http('GET', '/auth/me', { token: u.token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ id: u.id, email: u.email, role: 'VIEWER', companyId: co.id, companyName: 'Firmas S.A.S.', sessionExpiresAt: expect.any(String) });
    // CONTRACT §5: a session lasts 8 h.
    expect(Date.parse(me.body.sessionExpiresAt) - Date.now()).toBeGreaterThan(7.9 * 3600_000);
    expect(me.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    const out = await stack.http('POST', '/auth/logout', { token: u.token });
    expect([out.status, out.text]).toEqual([204, '']);
    const again = await stack.http('POST', '/auth/logout', { token: u.token });
    expect([again.status, again.body.error]).toEqual([401, 'SESSION_EXPIRED']);
  });

  it('logout and disabling a user end their sessions at once', async () => {
    const u = await newUser(co, 'OPERATOR');
    expect((await stack.http('POST', '/auth/logout', { token: u.token })).status).toBe(204);
    expect((await stack.http('GET', '/auth/me', { token: u.token })).body.error).toBe('SESSION_EXPIRED');
    const v = await newUser(co, 'OPERATOR');
    expect((await stack.admin('DELETE', `/admin/companies/${co.id}/users/${v.id}`)).body.disabledAt).toEqual(expect.any(String));
    expect((await stack.http('GET', '/auth/me', { token: v.token })).body.error).toBe('SESSION_EXPIRED');
    expect((await stack.http('POST', '/auth/login', { body: { email: v.email, password: v.password } })).body.error).toBe('INVALID_CREDENTIALS');
  });

  it('threshold 2: AWAITING_APPROVAL with funds reserved; wrong, replayed and VIEWER signatures refused; two users sign; it completes', async () => {
    const before = await balance();
    const t = await sendAwaiting(co, 12_345, { reference: `multi-${Date.now()}` });
    expect(t).toMatchObject({ approvalId: expect.stringMatching(/^appr_[0-9a-f]{32}$/), threshold: 2, amount: 12_345, rail: 'BREB' });
    expect(new Date(t.expiresAt).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    const held = await balance();
    expect(Number(held.pendingOutCents) - Number(before.pendingOutCents)).toBe(12_345);
    expect((await tx(t.id)).body.status).toBe('AWAITING_APPROVAL');

    const a = await newUser(co, 'OPERATOR');
    const b = await newUser(co, 'ADMIN');
    const viewer = await newUser(co, 'VIEWER');
    const list = await pending(a);
    const item = list.body.items.find((x: { approvalId: string }) => x.approvalId === t.approvalId);
    expect(item).toMatchObject({
      transactionId: t.id,
      amount: 12_345,
      rail: 'BREB',
      threshold: 2,
      status: 'PENDING',
      signatures: [],
      transactionStatus: 'AWAITING_APPROVAL',
    });

    expect((await sign(viewer, t.approvalId)).body.error).toBe('INSUFFICIENT_ROLE');
    const wrong = await sign(a, t.approvalId, code(a) === '000000' ? '111111' : '000000');
    expect([wrong.status, wrong.body.error]).toEqual([401, 'INVALID_TOTP_CODE']);
    const c1 = code(a);
    const s1 = await sign(a, t.approvalId, c1);
    expect(s1.status).toBe(200);
    expect(s1.body.signatures).toEqual([{ userId: a.id, email: a.email, role: 'OPERATOR', signedAt: expect.any(String) }]);
    // CONTRACT §9: ALREADY_SIGNED comes before the code, so a signer who already signed gets it
    // whatever code it sends (a replayed one included), and spends no code.
    const replay = await sign(a, t.approvalId, c1);
    expect([replay.status, replay.body.error]).toEqual([409, 'ALREADY_SIGNED']);
    expect((await sign(a, t.approvalId, code(a, 1))).body.error).toBe('ALREADY_SIGNED');
    expect((await sign(a, t.approvalId, '000000')).body.error).toBe('ALREADY_SIGNED');
    expect((await tx(t.id)).body.status).toBe('AWAITING_APPROVAL');

    const s2 = await sign(b, t.approvalId);
    expect(s2.body.status).toBe('APPROVED');
    expect((await settled(t.id)).status).toBe('COMPLETED');
    const after = await balance();
    expect(Number(after.pendingOutCents)).toBe(Number(before.pendingOutCents));
    expect(Number(after.availableCents)).toBe(Number(before.availableCents) - 12_345);
    expect((await pending(a, 'APPROVED')).body.items.map((x: { approvalId: string }) => x.approvalId)).toContain(t.approvalId);
    // The reference replays the same transfer: 200 (a multi-signature send) in its current state.
    const again = await stack.http('POST', '/transfers/send', { token: co.writeKey, body: t.request });
    expect([again.status, again.body.id, again.body.status, again.body.approvalId]).toEqual([200, t.id, 'COMPLETED', t.approvalId]);
  });

  it('reject: FAILED with the reason, funds released, no later signature', async () => {
    const before = await balance();
    const t = await sendAwaiting(co, 5_000);
    const u = await newUser(co, 'ADMIN');
    const r = await reject(u, t.approvalId, 'Factura duplicada');
    expect(r.body).toMatchObject({ status: 'REJECTED', rejectReason: 'Factura duplicada', rejectedBy: u.email, transactionStatus: 'FAILED' });
    const detail = await settled(t.id);
    expect(detail.status).toBe('FAILED');
    expect(JSON.stringify(detail)).toContain('Factura duplicada');
    expect(await balance()).toMatchObject({ availableCents: before.availableCents, pendingOutCents: before.pendingOutCents });
    const v = await newUser(co, 'OPERATOR');
    expect((await sign(v, t.approvalId)).body.error).toBe('APPROVAL_NOT_PENDING');
  });

  it('threshold 3 and concurrent final signatures: quorum once, dispatched once', async () => {
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { multiSigThreshold: 3 })).status).toBe(200);
    try {
      const t = await sendAwaiting(co, 3_000);
      expect(t.threshold).toBe(3);
      const [a, b, c, d] = await Promise.all([newUser(co, 'OPERATOR'), newUser(co, 'OPERATOR'), newUser(co, 'ADMIN'), newUser(co, 'ADMIN')]);
      expect((await sign(a, t.approvalId)).body.status).toBe('PENDING');
      const results = await Promise.all([sign(b, t.approvalId), sign(c, t.approvalId), sign(d, t.approvalId)]);
      const statuses = results.map((r) => r.status).sort();
      // Two of the three reach the threshold together at most once: one APPROVED answer, the
      // signature before it PENDING, the one after it refused.
      expect(results.filter((r) => r.body.status === 'APPROVED')).toHaveLength(1);
      expect(results.filter((r) => r.body.error === 'APPROVAL_NOT_PENDING')).toHaveLength(1);
      expect(statuses).toEqual([200, 200, 409]);
      expect((await settled(t.id)).status).toBe('COMPLETED');
    } finally {
      await stack.admin('PATCH', `/admin/companies/${co.id}`, { multiSigThreshold: 2 });
    }
  });

  it("company isolation: another company's users neither see nor sign these approvals", async () => {
    const t = await sendAwaiting(co, 1_000);
    const other = await stack.provision('Otra Empresa S.A.S.');
    const stranger = await newUser(other, 'ADMIN');
    expect((await pending(stranger)).body.items).toEqual([]);
    const s = await sign(stranger, t.approvalId);
    expect([s.status, s.body.error]).toEqual([404, 'APPROVAL_NOT_FOUND']);
    expect((await stack.http('POST', '/dashboard/approvals/appr_nope/sign', { token: stranger.token, body: { totpCode: '123456' } })).body.error).toBe(
      'APPROVAL_NOT_FOUND',
    );
    const u = await newUser(co, 'ADMIN');
    await reject(u, t.approvalId, 'limpieza');
  });

  it('bad input on the dashboard routes is 400 with the error shape', async () => {
    const u = await newUser(co, 'ADMIN');
    for (const body of [{}, { totpCode: 123456 }, { totpCode: '12345' }, { totpCode: '1234567' }, { totpCode: '123456', extra: 1 }]) {
      const r = await stack.http('POST', `/dashboard/approvals/appr_${'a'.repeat(32)}/sign`, { token: u.token, body });
      expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);
    }
    expect((await stack.http('GET', '/dashboard/approvals?status=NOPE', { token: u.token })).body.error).toBe('INVALID_REQUEST');
    expect((await stack.http('GET', '/dashboard/approvals?limit=1000', { token: u.token })).body.error).toBe('INVALID_REQUEST');
    const r = await stack.http('POST', `/dashboard/approvals/appr_${'a'.repeat(32)}/reject`, {
      token: u.token,
      body: { totpCode: '123456', reason: 'x'.repeat(501) },
    });
    expect(r.body.error).toBe('INVALID_REQUEST');
  });

  // ---- a bulk payout's one approval (docs/batches.md, "Multi-signature") ----

  it('a batch rejected in the dashboard: FAILED, every item FAILED, every hold released', async () => {
    const c = await multiSigCompany('Lote Rechazado S.A.S.');
    const before = await wallets(c);
    const b = await awaitingBatch(c, `RECHAZO-${Date.now()}`);
    const held = await wallets(c);
    for (const t of b.totals as Array<{ rail: 'BREB' | 'ACH'; total: number }>) {
      expect(BigInt(held[t.rail].pendingOutCents) - BigInt(before[t.rail].pendingOutCents)).toBe(BigInt(t.total));
      expect(BigInt(before[t.rail].availableCents) - BigInt(held[t.rail].availableCents)).toBe(BigInt(t.total));
    }
    const items = await stack.http('GET', `/transfers/batches/${b.id}/items`, { token: c.readKey });
    expect(items.body.items.map((i: { status: string }) => i.status)).toEqual(['AWAITING_APPROVAL', 'AWAITING_APPROVAL', 'AWAITING_APPROVAL']);

    const op = await newUser(c, 'OPERATOR');
    const seen = await stack.http('GET', '/dashboard/batches?status=AWAITING_APPROVAL', { token: op.token });
    expect(seen.body.items.map((x: { id: string }) => x.id)).toEqual([b.id]);
    const r = await stack.http('POST', `/dashboard/batches/${b.id}/reject`, { token: op.token, body: { totpCode: code(op), reason: 'Lote duplicado' } });
    expect(r.status).toBe(200);
    expect(r.body.approval).toMatchObject({ status: 'REJECTED', rejectReason: 'Lote duplicado', rejectedBy: op.email, decidedAt: expect.any(String) });

    const done = await eventually(
      async () => {
        const x = await stack.http('GET', `/transfers/batches/${b.id}`, { token: c.readKey });
        return x.body?.status === 'FAILED' && x.body.progress.finished === 3 ? x.body : undefined;
      },
      15_000,
      100,
    );
    expect(done.byStatus).toEqual([{ status: 'FAILED', count: 3, amount: 10_000 + 20_000 + 35_000 }]);
    const after = await stack.http('GET', `/transfers/batches/${b.id}/items`, { token: c.readKey });
    for (const i of after.body.items) {
      expect(i.status).toBe('FAILED');
      expect((await tx(i.transactionId, c.readKey)).body.status).toBe('FAILED');
    }
    const released = await eventually(
      async () => {
        const w = await wallets(c);
        return w.BREB.pendingOutCents === before.BREB.pendingOutCents && w.ACH.pendingOutCents === before.ACH.pendingOutCents ? w : undefined;
      },
      10_000,
      100,
    );
    expect(released.BREB.availableCents).toBe(before.BREB.availableCents);
    expect(released.ACH.availableCents).toBe(before.ACH.availableCents);
    // decided: no later signature
    const late = await stack.http('POST', `/dashboard/batches/${b.id}/sign`, { token: op.token, body: { totpCode: code(op, 1) } });
    expect([late.status, late.body.error]).toEqual([409, 'APPROVAL_NOT_PENDING']);
  });

  it("another company's batch reads 404 BATCH_NOT_FOUND on every dashboard route, and is not listed", async () => {
    const c = await multiSigCompany('Lote Ajeno S.A.S.');
    const b = await awaitingBatch(c, `AJENO-${Date.now()}`);
    const outsider = await newUser(co, 'ADMIN');
    const list = await stack.http('GET', '/dashboard/batches?limit=100', { token: outsider.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((x: { id: string }) => x.id)).not.toContain(b.id);
    for (const [method, path, body] of [
      ['GET', `/dashboard/batches/${b.id}`, undefined],
      ['GET', `/dashboard/batches/${b.id}/items`, undefined],
      ['POST', `/dashboard/batches/${b.id}/sign`, { totpCode: code(outsider) }],
      ['POST', `/dashboard/batches/${b.id}/reject`, { totpCode: code(outsider, 1), reason: 'no es mío' }],
      ['GET', '/dashboard/batches/no-es-un-lote', undefined],
    ] as const) {
      const r = await stack.http(method, path, { token: outsider.token, ...(body ? { body } : {}) });
      expect([method, path, r.status, r.body.error]).toEqual([method, path, 404, 'BATCH_NOT_FOUND']);
    }
    const still = await stack.http('GET', `/transfers/batches/${b.id}`, { token: c.readKey });
    expect(still.body).toMatchObject({ status: 'AWAITING_APPROVAL', approval: { status: 'PENDING', signatures: [] } });
    await rejectToRelease(c, b.id);
  });

  it('a VIEWER reads the batch but gets 403 INSUFFICIENT_ROLE signing or rejecting it; a signer cannot sign twice', async () => {
    const c = await multiSigCompany('Lote Visor S.A.S.');
    const b = await awaitingBatch(c, `VISOR-${Date.now()}`);
    const viewer = await newUser(c, 'VIEWER');
    expect((await stack.http('GET', `/dashboard/batches/${b.id}`, { token: viewer.token })).body).toMatchObject({ id: b.id, status: 'AWAITING_APPROVAL' });
    expect((await stack.http('GET', `/dashboard/batches/${b.id}/items?limit=2`, { token: viewer.token })).body.items).toHaveLength(2);
    for (const [path, body] of [
      ['sign', { totpCode: code(viewer) }],
      ['reject', { totpCode: code(viewer), reason: 'no' }],
    ] as const) {
      const r = await stack.http('POST', `/dashboard/batches/${b.id}/${path}`, { token: viewer.token, body });
      expect([r.status, r.body.error]).toEqual([403, 'INSUFFICIENT_ROLE']);
    }
    const op = await newUser(c, 'OPERATOR');
    const first = await stack.http('POST', `/dashboard/batches/${b.id}/sign`, { token: op.token, body: { totpCode: code(op) } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: 'AWAITING_APPROVAL',
      approval: { status: 'PENDING', signatures: [{ userId: op.id, email: op.email, role: 'OPERATOR' }] },
    });
    const again = await stack.http('POST', `/dashboard/batches/${b.id}/sign`, { token: op.token, body: { totpCode: code(op, 1) } });
    expect([again.status, again.body.error]).toEqual([409, 'ALREADY_SIGNED']);
    await rejectToRelease(c, b.id);
  });
});

describe('dashboard sessions expire and logins are rate limited', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ transfers: true, gatewayEnv: { SESSION_TTL_SECONDS: '1', RATE_LIMIT_AUTHENTICATION: '3' } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('a session stops working after SESSION_TTL_SECONDS; logins beyond the Authentication class limit from one IP are 429', async () => {
    const co = await stack.provision('Sesiones S.A.S.');
    const email = 'sesion@empresa.co';
    const password = 'Clave-segura-sesion-1';
    await stack.admin('POST', `/admin/companies/${co.id}/users`, { email, password, role: 'OPERATOR' });
    const s = await stack.http('POST', '/auth/login', { body: { email, password } });
    expect(s.status).toBe(200);
    expect((await stack.http('GET', '/auth/me', { token: s.body.token })).status).toBe(200);
    await eventually(
      async () => ((await stack.http('GET', '/auth/me', { token: s.body.token })).body?.error === 'SESSION_EXPIRED' ? true : undefined),
      5_000,
      200,
    );
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await stack.http('POST', '/auth/login', { body: { email, password: 'mala' } })).status);
    expect(codes).toEqual([401, 401, 429, 429]);
    const limited = await stack.http('POST', '/auth/login', { body: { email, password } });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('RATE_LIMIT_EXCEEDED');
  });
});

describe('dashboard approvals expire', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ transfers: true, transferEnv: { APPROVAL_TTL_SECONDS: '2' } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('without quorum in APPROVAL_TTL_SECONDS: EXPIRED, funds released, a late signature is 422 APPROVAL_EXPIRED', async () => {
    const co = await stack.provision('Vence S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { multiSigThreshold: 2 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 50_000, reference: 'seed' });
    const k = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3007770002' } });
    const sent = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 20_000,
        destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
        targetName: k.body.recipient.fullName,
        targetDocument: k.body.recipient.idValue,
      },
    });
    expect(sent.body.status).toBe('AWAITING_APPROVAL');
    const breb = async () => (await stack.http('GET', '/wallets/balance', { token: co.readKey })).body.wallets.find((w: { rail: string }) => w.rail === 'BREB');
    expect(await breb()).toMatchObject({ availableCents: '30000', pendingOutCents: '20000' });
    const u = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email: 'vence@empresa.co', password: 'Clave-segura-vence-1', role: 'ADMIN' });
    const detail = await eventually(
      async () => {
        const r = await stack.http('GET', `/wallets/transactions/${sent.body.id}`, { token: co.readKey });
        return r.body?.status === 'EXPIRED' ? r.body : undefined;
      },
      10_000,
      100,
    );
    expect(detail.status).toBe('EXPIRED');
    expect(await breb()).toMatchObject({ availableCents: '50000', pendingOutCents: '0' });
    const login = await stack.http('POST', '/auth/login', { body: { email: 'vence@empresa.co', password: 'Clave-segura-vence-1' } });
    const totpCode = new TOTP({ secret: Secret.fromBase32(u.body.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }).generate();
    const late = await stack.http('POST', `/dashboard/approvals/${sent.body.approvalId}/sign`, { token: login.body.token, body: { totpCode } });
    expect([late.status, late.body.error]).toEqual([422, 'APPROVAL_EXPIRED']);
    const expired = await stack.http('GET', '/dashboard/approvals?status=EXPIRED', { token: login.body.token });
    expect(expired.body.items.map((a: { approvalId: string }) => a.approvalId)).toEqual([sent.body.approvalId]);
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it("a batch's approval without quorum in APPROVAL_TTL_SECONDS: the batch EXPIRED, nothing paid, every hold released", async () => {
    const co = await stack.provision('Lote Vence S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { multiSigThreshold: 2 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 50_000, reference: 'seed' });
    const k = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3007770004' } });
    const line = (amount: number, reference: string) => ({
      amount,
      reference,
      destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
      targetName: k.body.recipient.fullName,
      targetDocument: k.body.recipient.idValue,
    });
    const created = await stack.http('POST', '/transfers/batches', { token: co.writeKey, body: { items: [line(10_000, 'V1'), line(5_000, 'V2')] } });
    const ex = await stack.http('POST', `/transfers/batches/${created.body.id}/execute`, { token: co.writeKey });
    expect([ex.status, ex.body.status]).toEqual([202, 'AWAITING_APPROVAL']);
    const breb = async () => (await stack.http('GET', '/wallets/balance', { token: co.readKey })).body.wallets.find((w: { rail: string }) => w.rail === 'BREB');
    expect(await breb()).toMatchObject({ availableCents: '35000', pendingOutCents: '15000' });
    const done = await eventually(
      async () => {
        const r = await stack.http('GET', `/transfers/batches/${created.body.id}`, { token: co.readKey });
        return r.body?.status === 'EXPIRED' && r.body.progress.finished === 2 ? r.body : undefined;
      },
      15_000,
      100,
    );
    expect(done.approval).toMatchObject({ status: 'EXPIRED' });
    const items = await stack.http('GET', `/transfers/batches/${created.body.id}/items`, { token: co.readKey });
    expect(items.body.items.map((i: { status: string }) => i.status)).toEqual(['EXPIRED', 'EXPIRED']);
    for (const i of items.body.items)
      expect((await stack.http('GET', `/wallets/transactions/${i.transactionId}`, { token: co.readKey })).body.status).toBe('EXPIRED');
    expect(
      await eventually(
        async () => {
          const w = await breb();
          return w.pendingOutCents === '0' ? w : undefined;
        },
        10_000,
        100,
      ),
    ).toMatchObject({ availableCents: '50000', pendingOutCents: '0' });
    await stack
      .admin('POST', `/admin/companies/${co.id}/users`, { email: 'lote.vence@empresa.co', password: 'Clave-segura-vence-2', role: 'ADMIN' })
      .then(async (u) => {
        const login = await stack.http('POST', '/auth/login', { body: { email: 'lote.vence@empresa.co', password: 'Clave-segura-vence-2' } });
        const totpCode = new TOTP({ secret: Secret.fromBase32(u.body.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }).generate();
        const late = await stack.http('POST', `/dashboard/batches/${created.body.id}/sign`, { token: login.body.token, body: { totpCode } });
        expect([late.status, late.body.error]).toEqual([422, 'APPROVAL_EXPIRED']);
      });
    expect((await stack.invariants()).violations).toEqual([]);
  });
});
