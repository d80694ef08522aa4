import { randomUUID } from 'node:crypto';
import { ERRORS } from '@wallet/platform';
import { ApprovalPolicyStateSchema, ApprovalPolicyVersionPageSchema, ApprovalPolicyVersionSchema } from '../src/api/approval-policies/schemas.js';
import { CounterpartyPageSchema } from '../src/api/counterparties/schemas.js';
import { ApprovalSchema, PendingApprovalTransferSchema, TransferSchema } from '../src/api/transfers/schemas.js';
import { BatchCreatedSchema } from '../src/api/transfers/batches/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { totpCode } from './support/operators.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * The approval policy's routes (docs/policies.md) and the sends it decides, through a real gateway
 * (HTTP, sessions and TOTP on Postgres, Redis) against the real transfer service: reading with an API
 * key and in the dashboard; proposing, signing and cancelling as ADMINs with TOTP (the service's own
 * checks before the code); `counterpartyId` on a send; `policyDecision`, `approvalRoles` and
 * 422 POLICY_REFUSED on the answers; bad input; company isolation. The change delay is 1 s.
 */
let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;
const PASSWORD = 'Clave-segura-2026!';
let seq = 0;

interface User {
  email: string;
  totpSecret: string;
  token: string;
}
interface Company {
  id: string;
  writeKey: string;
  readKey: string;
  admins: User[];
  operator: User;
  viewer: User;
}
let co: Company;
let other: Company;

async function newUser(companyId: string, role: 'ADMIN' | 'OPERATOR' | 'VIEWER'): Promise<User> {
  const email = `politica${++seq}.${companyId.slice(0, 6)}@empresa.co`;
  const u = await api.post(`/admin/companies/${companyId}/users`, { token: stack.gw.adminToken, body: { email, password: PASSWORD, role } });
  expect(u.status).toBe(201);
  const s = await api.post('/auth/login', { body: { email, password: PASSWORD } });
  expect(s.status).toBe(200);
  return { email, totpSecret: u.body.totpSecret, token: s.body.token };
}

async function company(): Promise<Company> {
  const c = await admin.createCompany();
  expect((await admin.patch(c.id, { rateLimitMultiplier: 1000 })).status).toBe(200);
  for (const rail of ['BREB', 'ACH'] as const) expect((await admin.credit(c.id, rail, 500_000_000, `seed-${rail}-${c.id}`)).status).toBe(201);
  return {
    id: c.id,
    writeKey: (await admin.issueKey(c.id, 'WRITE')).key,
    readKey: (await admin.issueKey(c.id, 'READ')).key,
    admins: [await newUser(c.id, 'ADMIN'), await newUser(c.id, 'ADMIN'), await newUser(c.id, 'ADMIN')],
    operator: await newUser(c.id, 'OPERATOR'),
    viewer: await newUser(c.id, 'VIEWER'),
  };
}

beforeAll(async () => {
  stack = await startStack(
    { RATE_LIMIT_FINANCIAL: '100000', RATE_LIMIT_READS: '100000', RATE_LIMIT_AUTHENTICATION: '100000' },
    { transferEnv: { POLICY_CHANGE_DELAY_SECONDS: '1' } },
  );
  api = client(stack.gw.url);
  admin = adminOf(api, stack.gw.adminToken);
  co = await company();
  other = await company();
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error, message: r.body?.message }).toEqual({ status, error: code, message: ERRORS[code].message });
  expectNoInternals(r.text);
}
function fieldsOf(r: Reply): string[] {
  expectError(r, 400, 'INVALID_REQUEST');
  return (r.body.details.fields as Array<{ path: string }>).map((f) => f.path);
}

/** A user's TOTP codes, each used once: the current step's, then the next one's (a code is never older than the last used). */
const codes = new Map<string, number>();
function code(u: User): string {
  const used = codes.get(u.email) ?? 0;
  codes.set(u.email, used + 1);
  if (used > 1) throw new Error(`${u.email} has no TOTP code left in this window`);
  return totpCode(u.totpSecret, used);
}

const POLICY = {
  rules: [
    {
      id: 'ach-tope',
      when: { rails: ['ACH'], amountAtLeastCents: 20_000_000 },
      then: { action: 'REFUSE', code: 'ACH_TOPE', message: 'ACH hasta 200.000 COP' },
    },
    { id: 'nomina', when: { counterpartyVerified: true, counterpartyTags: ['employee'] }, then: { action: 'ALLOW' } },
    { id: 'grandes', when: { amountAtLeastCents: 5_000_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 2, roles: ['ADMIN'] } },
  ],
  otherwise: { action: 'ALLOW' },
};

const propose = (u: User, body: Record<string, unknown>) => api.post('/dashboard/approval-policy', { token: u.token, body });
const sign = (u: User, id: string, totp = code(u)) => api.post(`/dashboard/approval-policy/${id}/sign`, { token: u.token, body: { totpCode: totp } });
const cancel = (u: User, id: string, totp = code(u)) => api.post(`/dashboard/approval-policy/${id}/cancel`, { token: u.token, body: { totpCode: totp } });
const state = async (c: Company) => {
  const r = await api.get('/approval-policy', { token: c.readKey });
  expect(r.status).toBe(200);
  return ApprovalPolicyStateSchema.parse(r.body);
};

/** Polls GET /approval-policy until `version` is in force (the change delay), with a deadline. */
async function inForce(c: Company, version: number, deadlineMs = 15_000) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const s = await state(c);
    if (s.inForce?.version === version) return s;
    if (Date.now() > until) throw new Error(`version ${version} not in force: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('reading the approval policy', () => {
  it('a company without a policy: none in force, the quorum and delay a change needs; no versions', async () => {
    expect(await state(other)).toEqual({ inForce: null, scheduled: [], proposed: null, changeQuorum: 2, changeDelaySeconds: 1 });
    const d = await api.get('/dashboard/approval-policy', { token: other.viewer.token });
    expect(d.status).toBe(200);
    expect(d.body).toEqual(await state(other));
    const v = await api.get('/approval-policy/versions', { token: other.readKey });
    expect(v.status).toBe(200);
    expect(ApprovalPolicyVersionPageSchema.parse(v.body)).toEqual({ items: [], nextBeforeVersion: null });
  });

  it('bad query parameters → 400; no credential → 401; an API key on the dashboard route → 403', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'beforeVersion=0', 'beforeVersion=99999999999', 'cursor=x']) {
      fieldsOf(await api.get(`/approval-policy/versions?${q}`, { token: co.readKey }));
    }
    expect((await api.get('/approval-policy')).status).toBe(401);
    const withKey = await api.get('/dashboard/approval-policy', { token: co.readKey });
    expect({ status: withKey.status, error: withKey.body.error }).toEqual({ status: 403, error: 'API_KEY_AUTH_NOT_ALLOWED' });
    expect((await api.get('/dashboard/approval-policy')).status).toBe(401);
  });
});

describe('changing the approval policy in the dashboard', () => {
  let proposed: any;

  it('only ADMINs propose: OPERATOR and VIEWER → 403 INSUFFICIENT_ROLE; a wrong TOTP code → 401 and nothing proposed', async () => {
    for (const u of [co.operator, co.viewer]) expectError(await propose(u, { policy: POLICY, totpCode: totpCode(u.totpSecret) }), 403, 'INSUFFICIENT_ROLE');
    const right = new Set([-1, 0, 1].map((s) => totpCode(co.admins[0]!.totpSecret, s)));
    const wrong = ['000000', '111111', '222222'].find((c) => !right.has(c))!;
    expectError(await propose(co.admins[0]!, { policy: POLICY, totpCode: wrong }), 401, 'INVALID_TOTP_CODE');
    expect((await state(co)).proposed).toBeNull();
  });

  it('bad bodies → 400 with every field, before the code is spent (malformed JSON, wrong types, missing fields, huge values, duplicates)', async () => {
    const u = co.admins[0]!;
    const totp = totpCode(u.totpSecret);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ totpCode: totp }, 'policy'],
      [{ policy: POLICY }, 'totpCode'],
      [{ policy: POLICY, totpCode: 123456 }, 'totpCode'],
      [{ policy: POLICY, totpCode: '12345' }, 'totpCode'],
      [{ policy: 'allow', totpCode: totp }, 'policy'],
      [{ policy: { rules: {}, otherwise: { action: 'ALLOW' } }, totpCode: totp }, 'policy.rules'],
      [{ policy: { rules: [] }, totpCode: totp }, 'policy.otherwise'],
      [{ policy: { ...POLICY, extra: 1 }, totpCode: totp }, 'policy.extra'],
      [{ policy: { rules: [], otherwise: { action: 'REQUIRE_APPROVALS', approvals: 11 } }, totpCode: totp }, 'policy.otherwise.approvals'],
      [
        { policy: { rules: [{ id: 'x', when: { amountAtLeastCents: 1e30 }, then: { action: 'ALLOW' } }], otherwise: { action: 'ALLOW' } }, totpCode: totp },
        'policy.rules.0.when.amountAtLeastCents',
      ],
      [{ policy: { rules: [POLICY.rules[1], POLICY.rules[1]], otherwise: { action: 'ALLOW' } }, totpCode: totp }, 'policy.rules.1.id'],
      [{ policy: POLICY, note: 'x'.repeat(501), totpCode: totp }, 'note'],
      [{ policy: POLICY, totpCode: totp, extra: true }, 'extra'],
    ];
    for (const [body, path] of bad) expect(fieldsOf(await propose(u, body))).toContain(path);
    const rules = Array.from({ length: 101 }, (_, i) => ({ id: `r${i}`, when: {}, then: { action: 'ALLOW' } }));
    expect(fieldsOf(await propose(u, { policy: { rules, otherwise: { action: 'ALLOW' } }, totpCode: totp }))).toContain('policy.rules');
    const malformed = await api.post('/dashboard/approval-policy', { token: u.token, raw: '{"policy": {', headers: { 'content-type': 'application/json' } });
    expectError(malformed, 400, 'INVALID_REQUEST');
    // None of these spent the code: it still proposes.
    proposed = ApprovalPolicyVersionSchema.parse((await propose(u, { policy: POLICY, note: 'Pagos grandes con dos firmas', totpCode: totp })).body);
    codes.set(u.email, 1);
    expect(proposed).toMatchObject({
      id: expect.stringMatching(/^apol_[a-z0-9]{24}$/),
      version: 1,
      status: 'PROPOSED',
      policy: POLICY,
      requiredSignatures: 2,
      proposedBy: u.email,
      signatures: [{ email: u.email, role: 'ADMIN', signedAt: expect.any(String) }],
      note: 'Pagos grandes con dos firmas',
      decidedAt: null,
      decidedBy: null,
      effectiveAt: null,
    });
    const s = await state(co);
    expect(s).toMatchObject({ inForce: null, scheduled: [], proposed: { id: proposed.id, status: 'PROPOSED' } });
    expect((await api.get('/dashboard/approval-policy', { token: co.viewer.token })).body.proposed.id).toBe(proposed.id);
  });

  it('a second proposal while one is pending → 409 POLICY_CHANGE_PENDING before the code (the same code then signs)', async () => {
    const b = co.admins[1]!;
    const totp = code(b);
    expectError(await propose(b, { policy: POLICY, totpCode: totp }), 409, 'POLICY_CHANGE_PENDING');
    // The proposer signs again → ALREADY_SIGNED, before the code.
    expectError(await sign(co.admins[0]!, proposed.id, totpCode(co.admins[0]!.totpSecret, 1)), 409, 'ALREADY_SIGNED');
    // Another company's ADMIN, an unknown or malformed id → 404.
    expectError(await sign(other.admins[0]!, proposed.id), 404, 'POLICY_VERSION_NOT_FOUND');
    expectError(await cancel(other.admins[0]!, proposed.id), 404, 'POLICY_VERSION_NOT_FOUND');
    expectError(await sign(b, 'apol_000000000000000000000000', totp), 404, 'POLICY_VERSION_NOT_FOUND');
    expectError(await sign(b, 'no-es-un-id', totp), 404, 'POLICY_VERSION_NOT_FOUND');
    expectError(await sign(co.operator, proposed.id, totpCode(co.operator.totpSecret)), 403, 'INSUFFICIENT_ROLE');
    for (const body of [{}, { totpCode: 123456 }, { totpCode: '1234567' }, { totpCode: totp, extra: 1 }]) {
      expectError(await api.post(`/dashboard/approval-policy/${proposed.id}/sign`, { token: b.token, body }), 400, 'INVALID_REQUEST');
    }
    expect((await state(other)).proposed).toBeNull();

    const r = await sign(b, proposed.id, totp);
    expect(r.status).toBe(200);
    const approved = ApprovalPolicyVersionSchema.parse(r.body);
    expect(approved).toMatchObject({ status: 'APPROVED', decidedBy: b.email, signatures: [{ email: co.admins[0]!.email }, { email: b.email }] });
    expect(Date.parse(approved.effectiveAt!) - Date.parse(approved.decidedAt!)).toBe(1000);
    const s = await inForce(co, 1);
    expect(s).toMatchObject({ proposed: null, scheduled: [], inForce: { id: proposed.id, status: 'APPROVED', policy: POLICY } });
    // Decided: no more signatures nor cancelling.
    expectError(await sign(co.admins[2]!, proposed.id), 409, 'POLICY_CHANGE_NOT_PENDING');
    expectError(await cancel(co.admins[2]!, proposed.id), 409, 'POLICY_CHANGE_NOT_PENDING');
  });

  it('any ADMIN cancels a proposal: CANCELLED, the policy in force stays; versions page newest first', async () => {
    const p = await propose(co.admins[0]!, { policy: { rules: [], otherwise: { action: 'ALLOW' } }, totpCode: code(co.admins[0]!) });
    expect(p.status).toBe(201);
    expectError(await cancel(co.viewer, p.body.id, totpCode(co.viewer.totpSecret)), 403, 'INSUFFICIENT_ROLE');
    const c = await cancel(co.admins[1]!, p.body.id);
    expect(c.status).toBe(200);
    expect(ApprovalPolicyVersionSchema.parse(c.body)).toMatchObject({ version: 2, status: 'CANCELLED', decidedBy: co.admins[1]!.email, effectiveAt: null });
    expect(await state(co)).toMatchObject({ proposed: null, inForce: { version: 1 } });

    const page1 = await api.get('/approval-policy/versions?limit=1', { token: co.readKey });
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({ items: [{ version: 2, status: 'CANCELLED' }], nextBeforeVersion: 2 });
    const page2 = await api.get('/approval-policy/versions?limit=1&beforeVersion=2', { token: co.readKey });
    expect(page2.body).toMatchObject({ items: [{ version: 1, status: 'APPROVED' }], nextBeforeVersion: null });
    expect((await api.get('/approval-policy/versions', { token: other.readKey })).body.items).toEqual([]);
  });
});

describe('sends decided by the policy', () => {
  const key = { type: 'PHONE', value: '3001112233' };
  async function holder() {
    const r = await api.post('/transfers/resolve-key', { token: co.writeKey, body: { keyValue: key.value } });
    expect(r.status).toBe(200);
    return r.body.recipient as { fullName: string; idValue: string };
  }
  const send = (body: Record<string, unknown>, c: Company = co) => api.post('/transfers/send', { token: c.writeKey, body });
  const account = (n: string) => ({
    bankId: 1,
    accountTypeId: 20,
    accountNumber: n,
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderFirstName: 'Ana María',
    holderLastName: 'Pérez Gómez',
  });

  it('a big send waits for 2 ADMIN signatures: 200 AWAITING_APPROVAL with the decision and the roles; the dashboard listing shows them', async () => {
    const h = await holder();
    const r = await send({ amount: 6_000_000, destination: { brebKey: key }, targetName: h.fullName, targetDocument: h.idValue });
    expect(r.status).toBe(200);
    const t = PendingApprovalTransferSchema.parse(r.body);
    expect(t).toMatchObject({
      status: 'AWAITING_APPROVAL',
      threshold: 2,
      approvalRoles: ['ADMIN'],
      policyDecision: { policyVersion: 1, ruleId: 'grandes', action: 'REQUIRE_APPROVALS', approvals: 2, roles: ['ADMIN'] },
    });
    const list = await api.get('/dashboard/approvals', { token: co.viewer.token });
    expect(list.status).toBe(200);
    const a = ApprovalSchema.parse(list.body.items.find((x: { approvalId: string }) => x.approvalId === t.approvalId));
    expect(a.approvalRoles).toEqual(['ADMIN']);
    // An OPERATOR may not sign it (the policy asks for ADMINs).
    const op = await api.post(`/dashboard/approvals/${t.approvalId}/sign`, {
      token: co.operator.token,
      body: { totpCode: totpCode(co.operator.totpSecret, 1) },
    });
    expect(op.status).toBe(403);
  });

  it('a small send is allowed by `otherwise`: 201 with policyDecision ruleId null', async () => {
    const h = await holder();
    const r = await send({ amount: 10_000, destination: { brebKey: key }, targetName: h.fullName, targetDocument: h.idValue });
    expect(r.status).toBe(201);
    expect(TransferSchema.parse(r.body).policyDecision).toEqual({ policyVersion: 1, ruleId: null, action: 'ALLOW', approvals: 0, roles: [] });
  });

  it('an ACH send a REFUSE rule matches → 422 POLICY_REFUSED with the rule, the code and the message; nothing reserved', async () => {
    const before = await api.get('/wallets/balance', { token: co.readKey });
    const r = await send({ amount: 25_000_000, destination: { bankAccount: account('5000000001') }, reference: `ref-${randomUUID()}` });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: 'POLICY_REFUSED',
      message: ERRORS.POLICY_REFUSED.message,
      details: { policyVersion: 1, ruleId: 'ach-tope', code: 'ACH_TOPE', message: 'ACH hasta 200.000 COP' },
    });
    expect((await api.get('/wallets/balance', { token: co.readKey })).body).toEqual(before.body);
  });

  it('`counterpartyId`: a verified employee is paid under the payroll rule; another company’s → 404; with a destination or malformed → 400', async () => {
    const h = await holder();
    const cp = await api.post('/counterparties', {
      token: co.writeKey,
      body: {
        name: 'Empleada',
        brebKey: { keyType: 'PHONE', keyValue: key.value },
        documentTypeId: 1,
        documentNumber: h.idValue,
        holderName: h.fullName,
        tags: ['employee'],
      },
    });
    expect(cp.status).toBe(201);
    expect(cp.body.verification.status).toBe('VERIFIED');
    const r = await send({ amount: 6_000_000, counterpartyId: cp.body.id });
    expect(r.status).toBe(201);
    expect(TransferSchema.parse(r.body)).toMatchObject({
      rail: 'BREB',
      targetName: h.fullName,
      policyDecision: { policyVersion: 1, ruleId: 'nomina', action: 'ALLOW' },
    });

    expectError(await send({ amount: 10_000, counterpartyId: cp.body.id }, other), 404, 'COUNTERPARTY_NOT_FOUND');
    expectError(await send({ amount: 10_000, counterpartyId: 'cpty_000000000000000000000000' }), 404, 'COUNTERPARTY_NOT_FOUND');
    expect(fieldsOf(await send({ amount: 10_000, counterpartyId: cp.body.id, destination: { brebKey: key }, targetName: h.fullName }))).toContain(
      'destination',
    );
    expect(fieldsOf(await send({ amount: 10_000, counterpartyId: cp.body.id, targetAnchorHandle: 'anc_1', targetName: 'Ana' }))).toContain('destination');
    expect(fieldsOf(await send({ amount: 10_000, counterpartyId: 'cpty_MAL' }))).toContain('counterpartyId');
    expect(fieldsOf(await send({ amount: 10_000, counterpartyId: 42 }))).toContain('counterpartyId');
    expect(fieldsOf(await send({ amount: 10_000, counterpartyId: `cpty_${'a'.repeat(10_000)}` }))).toContain('counterpartyId');

    // A bulk payout's item takes no counterpartyId: the item is invalid, with its reason.
    const b = await api.post('/transfers/batches', {
      token: co.writeKey,
      body: { reference: `lote-${randomUUID()}`, items: [{ amount: 10_000, counterpartyId: cp.body.id }] },
    });
    expect(b.status).toBe(201);
    expect(b.body).toMatchObject({ status: 'REJECTED', invalidCount: 1, results: [{ item: 1, valid: false, error: 'INVALID_REQUEST' }] });
    expect(b.body.results[0].message).toContain('counterpartyId: Campo no permitido.');

    // The dashboard lists the company's counterparties (any role), never another company's.
    const mine = await api.get('/dashboard/counterparties?tag=employee', { token: co.viewer.token });
    expect(mine.status).toBe(200);
    expect(CounterpartyPageSchema.parse(mine.body).items.map((c) => c.id)).toContain(cp.body.id);
    const theirs = await api.get('/dashboard/counterparties', { token: other.viewer.token });
    expect(theirs.body.items.map((c: { id: string }) => c.id)).not.toContain(cp.body.id);
    fieldsOf(await api.get('/dashboard/counterparties?limit=0', { token: co.viewer.token }));
    expect((await api.get('/dashboard/counterparties', { token: co.readKey })).body.error).toBe('API_KEY_AUTH_NOT_ALLOWED');
  });

  it('quotes explain the rule and the approvals it needs; a counterpartyId is seen as its payee; nothing reserved', async () => {
    const before = await api.get('/wallets/balance', { token: co.readKey });
    const quote = (body: Record<string, unknown>, path = '/transfers/quote') => api.post(path, { token: co.writeKey, body });
    const big = await quote({ amount: 6_000_000, keyValue: key.value });
    expect(big.status).toBe(200);
    expect(big.body.policyDecision).toEqual({
      policyVersion: 1,
      ruleId: 'grandes',
      action: 'REQUIRE_APPROVALS',
      approvals: 2,
      roles: ['ADMIN'],
    });
    // An ACH quote the REFUSE rule matches says so, with the company's code and message.
    const ach = await quote({ amount: 25_000_000 }, '/transfers/quote/ach');
    expect(ach.status).toBe(200);
    expect(ach.body.policyDecision).toEqual({
      policyVersion: 1,
      ruleId: 'ach-tope',
      action: 'REFUSE',
      approvals: 0,
      roles: [],
      code: 'ACH_TOPE',
      message: 'ACH hasta 200.000 COP',
    });
    const cps = (await api.get('/counterparties?tag=employee', { token: co.readKey })).body.items as Array<{ id: string }>;
    expect(cps.length).toBeGreaterThan(0);
    expect((await quote({ amount: 6_000_000, keyValue: key.value, counterpartyId: cps[0]!.id })).body.policyDecision).toMatchObject({
      ruleId: 'nomina',
      action: 'ALLOW',
    });
    expectError(await quote({ amount: 10_000, keyValue: key.value, counterpartyId: 'cpty_000000000000000000000000' }), 404, 'COUNTERPARTY_NOT_FOUND');
    expect(fieldsOf(await quote({ amount: 10_000, keyValue: key.value, counterpartyId: 'cpty_MAL' }))).toContain('counterpartyId');
    expect((await api.get('/wallets/balance', { token: co.readKey })).body).toEqual(before.body);
  });

  it('the batch validation report explains each item, the total and the one approval the batch would wait for', async () => {
    const h = await holder();
    const item = (amount: number) => ({ amount, destination: { brebKey: key }, targetName: h.fullName, targetDocument: h.idValue });
    const b = await api.post('/transfers/batches', {
      token: co.writeKey,
      body: {
        reference: `lote-${randomUUID()}`,
        mode: 'valid_only',
        items: [item(10_000), item(6_000_000), { amount: 25_000_000, destination: { bankAccount: account('5000000002') } }],
      },
    });
    expect(b.status).toBe(201);
    const created = BatchCreatedSchema.parse(b.body);
    expect(created.status).toBe('VALIDATED');
    expect(created.results.map((r) => [r.item, r.policyDecision?.action, r.policyDecision?.ruleId])).toEqual([
      [1, 'ALLOW', null],
      [2, 'REQUIRE_APPROVALS', 'grandes'],
      [3, 'REFUSE', 'ach-tope'],
    ]);
    expect(created.totalPolicyDecision).toMatchObject({ action: 'REQUIRE_APPROVALS', ruleId: 'grandes' });
    expect(created.policyDecision).toMatchObject({ action: 'REQUIRE_APPROVALS', approvals: 2, roles: ['ADMIN'] });
  });
});
