import { Secret, TOTP } from 'otpauth';
import { eventually } from '@wallet/platform/testing';
import { bogotaClock, isColombianHoliday } from '@wallet/transfer/testing';
import { startStack } from '../support/stack.js';
import { verifyWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Company = Awaited<ReturnType<Stack['provision']>>;
interface User {
  email: string;
  totpSecret: string;
  token: string;
}

/**
 * An approval policy through the whole stack (docs/policies.md): two dashboard ADMINs change it with
 * TOTP (quorum 2), it comes into force after the change delay, the company hears of it by the
 * `company.policy_changed` webhook (Standard Webhooks), and then it decides the sends of
 * POST /transfers/send: approvals for a big one, a refusal for a big ACH, and for sends naming a
 * counterparty, its verification and tags (a verified employee under the payroll rule, an unverified
 * account's first payment waiting for an approval). The real gateway, transfer service, ledger,
 * sandbox rails and webhook service.
 */
describe('approval policies end to end', () => {
  let stack: Stack;
  let co: Company;
  let ana: User;
  let luis: User;
  let secret = '';
  const rx = new WebhookReceiver('/policy-events');
  let seq = 0;

  const POLICY = {
    rules: [
      {
        id: 'ach-tope',
        description: 'ACH grandes, nunca',
        when: { rails: ['ACH'], amountAtLeastCents: 20_000_000 },
        then: { action: 'REFUSE', code: 'ACH_TOPE', message: 'Los pagos ACH no pueden pasar de 200.000 COP.' },
      },
      { id: 'nomina', when: { counterpartyVerified: true, counterpartyTags: ['employee'] }, then: { action: 'ALLOW' } },
      { id: 'grandes', when: { amountAtLeastCents: 50_000_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 2, roles: ['ADMIN'] } },
      { id: 'primer-pago', when: { firstPayment: true }, then: { action: 'REQUIRE_APPROVALS', approvals: 1 } },
    ],
    otherwise: { action: 'ALLOW' },
  };

  const code = (u: User, step = 0) =>
    new TOTP({ secret: Secret.fromBase32(u.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + step * 30_000 });
  const post = (path: string, body: unknown) => stack.http('POST', path, { token: co.writeKey, body });

  async function newAdmin(): Promise<User> {
    const email = `admin${++seq}.${co.id.slice(0, 6)}@politicas.co`;
    const password = `Clave-segura-${seq}-2026`;
    const r = await stack.admin('POST', `/admin/companies/${co.id}/users`, { email, password, role: 'ADMIN' });
    expect(r.status).toBe(201);
    const s = await stack.http('POST', '/auth/login', { body: { email, password } });
    expect(s.status).toBe(200);
    return { email, totpSecret: r.body.totpSecret, token: s.body.token };
  }

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      webhooks: true,
      transferEnv: { POLICY_CHANGE_DELAY_SECONDS: '2', COUNTERPARTY_PRENOTE_CHECK_SECONDS: '600' },
      // Six ADMINs log in and sign within a minute (by default five dashboard logins a minute per address, ten financial operations).
      gatewayEnv: { RATE_LIMIT_AUTHENTICATION: '60', RATE_LIMIT_FINANCIAL: '100' },
      // The ACH prenote stays unanswered during the test: the account counterparty is not verified.
      sandboxEnv: { SANDBOX_ACH_PRENOTE_MS: '600000' },
    });
    co = await stack.provision('Política de Pagos S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    for (const rail of ['BREB', 'ACH'])
      expect(
        (await stack.admin('POST', `/admin/companies/${co.id}/wallets/${rail}/credit`, { amountCents: 500_000_000, reference: `seed-${rail}` })).status,
      ).toBe(201);
    ana = await newAdmin();
    luis = await newAdmin();
    await rx.start();
    const ep = await post('/webhooks/endpoints', { url: rx.url, events: ['company.policy_changed'] });
    expect(ep.status).toBe(201);
    secret = ep.body.secret;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('an ADMIN proposes with TOTP, a second signs (quorum 2): in force from effectiveAt, and the company.policy_changed webhook verifies', async () => {
    const before = await stack.http('GET', '/approval-policy', { token: co.readKey });
    expect(before.body).toEqual({ inForce: null, scheduled: [], proposed: null, changeQuorum: 2, changeDelaySeconds: 2 });

    const p = await stack.http('POST', '/dashboard/approval-policy', {
      token: ana.token,
      body: { policy: POLICY, note: 'Nómina libre, pagos grandes con dos firmas', totpCode: code(ana) },
    });
    expect(p.status).toBe(201);
    expect(p.body).toMatchObject({
      version: 1,
      status: 'PROPOSED',
      requiredSignatures: 2,
      proposedBy: ana.email,
      signatures: [{ email: ana.email, role: 'ADMIN' }],
    });
    // Proposed only: it decides nothing yet; every user of the dashboard sees it coming.
    expect((await stack.http('GET', '/dashboard/approval-policy', { token: luis.token })).body).toMatchObject({ inForce: null, proposed: { id: p.body.id } });

    const s = await stack.http('POST', `/dashboard/approval-policy/${p.body.id}/sign`, { token: luis.token, body: { totpCode: code(luis) } });
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ status: 'APPROVED', decidedBy: luis.email, signatures: [{ email: ana.email }, { email: luis.email }] });
    const effectiveAt = Date.parse(s.body.effectiveAt);
    expect(effectiveAt - Date.parse(s.body.decidedAt)).toBe(2000);

    const scheduled = await stack.http('GET', '/approval-policy', { token: co.readKey });
    if (Date.now() < effectiveAt) expect(scheduled.body).toMatchObject({ inForce: null, scheduled: [{ id: p.body.id }], proposed: null });
    const inForce = await eventually(async () => {
      const r = await stack.http('GET', '/approval-policy', { token: co.readKey });
      return r.body.inForce?.version === 1 ? r.body : undefined;
    }, 15_000);
    expect(Date.now()).toBeGreaterThanOrEqual(effectiveAt);
    expect(inForce).toMatchObject({ inForce: { id: p.body.id, policy: POLICY, effectiveAt: s.body.effectiveAt }, scheduled: [], proposed: null });

    const hit = await eventually(async () => rx.ofType('company.policy_changed')[0], 15_000);
    expect(verifyWebhook(secret, hit)).toBe(true);
    expect(verifyWebhook(secret, { ...hit, raw: hit.raw.replace('ach-tope', 'ach-topf') })).toBe(false);
    expect(hit.body).toMatchObject({
      type: 'company.policy_changed',
      data: { companyId: co.id, policyId: p.body.id, version: 1, policy: POLICY, signedBy: [ana.email, luis.email], previousVersion: 0 },
    });
    expect(Date.parse(hit.body.data.effectiveAt)).toBe(effectiveAt);
  });

  it('the policy decides the sends: a big one waits for two ADMINs, a big ACH is refused with the rule, code and message', async () => {
    const k = await post('/transfers/resolve-key', { keyValue: '3007770001' });
    expect(k.status).toBe(200);
    const big = await post('/transfers/send', {
      amount: 60_000_000,
      destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
      targetName: k.body.recipient.fullName,
      targetDocument: k.body.recipient.idValue,
      reference: 'pago-grande-1',
    });
    expect(big.status).toBe(200);
    expect(big.body).toMatchObject({
      status: 'AWAITING_APPROVAL',
      threshold: 2,
      approvalRoles: ['ADMIN'],
      policyDecision: { policyVersion: 1, ruleId: 'grandes', action: 'REQUIRE_APPROVALS', approvals: 2, roles: ['ADMIN'] },
    });
    const listed = await stack.http('GET', '/dashboard/approvals', { token: ana.token });
    expect(listed.body.items.find((a: { approvalId: string }) => a.approvalId === big.body.approvalId)).toMatchObject({
      threshold: 2,
      approvalRoles: ['ADMIN'],
    });

    const refused = await post('/transfers/send', {
      amount: 25_000_000,
      destination: {
        bankAccount: {
          bankId: 1,
          accountTypeId: 20,
          accountNumber: '5012345678',
          documentTypeId: 1,
          documentNumber: '1020304050',
          holderFirstName: 'Ana María',
          holderLastName: 'Pérez Gómez',
        },
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      error: 'POLICY_REFUSED',
      message: 'La política de aprobación de la empresa no permite esta transferencia.',
      details: { policyVersion: 1, ruleId: 'ach-tope', code: 'ACH_TOPE', message: 'Los pagos ACH no pueden pasar de 200.000 COP.' },
    });
  });

  it('sends naming a counterparty: a verified employee is paid at once (payroll rule); the same amount to an unverified account waits (first payment)', async () => {
    const k = await post('/transfers/resolve-key', { keyValue: '3001112233' });
    const employee = await post('/counterparties', {
      name: 'Empleada de nómina',
      brebKey: { keyType: 'PHONE', keyValue: '3001112233' },
      documentTypeId: 1,
      documentNumber: k.body.recipient.idValue,
      holderName: k.body.recipient.fullName,
      tags: ['employee'],
    });
    expect(employee.status).toBe(201);
    expect(employee.body.verification.status).toBe('VERIFIED');
    const account = await post('/counterparties', {
      name: 'Proveedor nuevo',
      tags: ['proveedores'],
      bankAccount: {
        bankId: 1,
        accountTypeId: 20,
        accountNumber: '5098765432',
        documentTypeId: 1,
        documentNumber: '1020304050',
        holderFirstName: 'Ana María',
        holderLastName: 'Pérez Gómez',
      },
    });
    expect(account.status).toBe(201);
    expect(account.body.verification.status).toBe('PENDING');

    const paid = await post('/transfers/send', { amount: 150_000, counterpartyId: employee.body.id, reference: 'nomina-1' });
    expect(paid.status).toBe(201);
    expect(paid.body).toMatchObject({
      status: 'PENDING',
      rail: 'BREB',
      targetName: k.body.recipient.fullName,
      policyDecision: { policyVersion: 1, ruleId: 'nomina', action: 'ALLOW', approvals: 0, roles: [] },
    });
    await eventually(async () => (await stack.http('GET', `/wallets/transactions/${paid.body.id}`, { token: co.readKey })).body.status === 'COMPLETED', 20_000);

    const waits = await post('/transfers/send', { amount: 150_000, counterpartyId: account.body.id, reference: 'proveedor-1' });
    expect(waits.status).toBe(200);
    expect(waits.body).toMatchObject({
      status: 'AWAITING_APPROVAL',
      rail: 'ACH',
      threshold: 1,
      approvalRoles: ['ADMIN', 'OPERATOR'],
      policyDecision: { policyVersion: 1, ruleId: 'primer-pago', action: 'REQUIRE_APPROVALS', approvals: 1, roles: ['ADMIN', 'OPERATOR'] },
    });
    // One signature dispatches it.
    const signed = await stack.http('POST', `/dashboard/approvals/${waits.body.approvalId}/sign`, { token: ana.token, body: { totpCode: code(ana, 1) } });
    expect(signed.status).toBe(200);
    expect(signed.body).toMatchObject({ status: 'APPROVED', approvalRoles: ['ADMIN', 'OPERATOR'] });

    // The dashboard lists both counterparties, read only.
    const listed = await stack.http('GET', '/dashboard/counterparties', { token: luis.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining([employee.body.id, account.body.id]));
  });

  it('the other rule kinds through the gateway: Bogotá time, day and holiday; the amount sent today; a bulk payout by line and by total', async () => {
    // A new version, signed by two new ADMINs (a TOTP code is accepted once per user and time step).
    const [eva, tomas] = [await newAdmin(), await newAdmin()];
    const now = bogotaClock(new Date());
    const hhmm = (m: number) => {
      const x = (((m % 1440) + 1440) % 1440) | 0;
      return `${String(Math.floor(x / 60)).padStart(2, '0')}:${String(x % 60).padStart(2, '0')}`;
    };
    const v3 = {
      rules: [
        {
          id: 'horario',
          description: 'Pagos pequeños: ahora no (hora, día y festivo de Bogotá)',
          when: {
            timeOfDay: { from: hhmm(now.minute - 30), to: hhmm(now.minute + 30) },
            daysOfWeek: [now.weekday],
            holiday: isColombianHoliday(now.date),
            amountBelowCents: 100_000,
          },
          then: { action: 'REFUSE', code: 'HORARIO' },
        },
        { id: 'acumulado', when: { cumulativeTodayAtLeastCents: 100_000_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 2 } },
      ],
      otherwise: { action: 'ALLOW' },
    };
    const p = await stack.http('POST', '/dashboard/approval-policy', { token: eva.token, body: { policy: v3, totpCode: code(eva) } });
    expect(p.status).toBe(201);
    const s = await stack.http('POST', `/dashboard/approval-policy/${p.body.id}/sign`, { token: tomas.token, body: { totpCode: code(tomas) } });
    expect(s.status).toBe(200);
    const version = s.body.version as number;
    await eventually(
      async () => ((await stack.http('GET', '/approval-policy', { token: co.readKey })).body.inForce?.version === version ? true : undefined),
      15_000,
    );

    const k = await post('/transfers/resolve-key', { keyValue: '3007770002' });
    const to = {
      destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
      targetName: k.body.recipient.fullName,
      targetDocument: k.body.recipient.idValue,
    };
    // Now, today, in Bogotá: a small payment is refused by the time rule.
    const small = await post('/transfers/send', { amount: 50_000, ...to });
    expect(small.status).toBe(422);
    expect(small.body.details).toEqual({ policyVersion: version, ruleId: 'horario', code: 'HORARIO' });
    // The amount sent today: the company sent about 60.3 million centavos in the earlier tests; 1 million
    // more stays under 100 million, 40 million more crosses it and waits for two approvals.
    const today = await post('/transfers/send', { amount: 1_000_000, ...to });
    expect(today.status).toBe(201);
    expect(today.body.policyDecision).toMatchObject({ policyVersion: version, ruleId: null, action: 'ALLOW' });
    const quote = await post('/transfers/quote', { amount: 40_000_000, keyValue: k.body.keyValue });
    expect(quote.body.policyDecision).toMatchObject({ ruleId: 'acumulado', action: 'REQUIRE_APPROVALS', approvals: 2 });
    const crosses = await post('/transfers/send', { amount: 40_000_000, ...to });
    expect(crosses.status).toBe(200);
    expect(crosses.body).toMatchObject({ status: 'AWAITING_APPROVAL', threshold: 2, policyDecision: { ruleId: 'acumulado' } });

    // A bulk payout: the small line is refused alone; the total, counted on today's amount, asks two approvals.
    const b = await post('/transfers/batches', {
      reference: `lote-${co.id.slice(0, 6)}`,
      mode: 'valid_only',
      items: [
        { amount: 1_000_000, ...to },
        { amount: 50_000, ...to },
      ],
    });
    expect(b.status).toBe(201);
    expect(b.body.results.map((r: { policyDecision?: { ruleId: string | null } }) => r.policyDecision?.ruleId)).toEqual(['acumulado', 'horario']);
    expect(b.body.policyDecision).toMatchObject({ action: 'REQUIRE_APPROVALS', approvals: 2 });
    const executed = await post(`/transfers/batches/${b.body.id}/execute`, {});
    expect(executed.status).toBe(202);
    expect(executed.body).toMatchObject({ status: 'AWAITING_APPROVAL', threshold: 2 });
    const items = await stack.http('GET', `/transfers/batches/${b.body.id}/items`, { token: co.readKey });
    expect(items.body.items.map((i: { status: string; error?: string | null }) => [i.status, i.error ?? null])).toEqual([
      ['AWAITING_APPROVAL', null],
      ['REJECTED', 'POLICY_REFUSED'],
    ]);
  });

  it('a proposal withdrawn by another ADMIN is CANCELLED and the policy in force stays; the versions are listed newest first', async () => {
    // Two more ADMINs: a TOTP code is accepted once per user and time step.
    const pepe = await newAdmin();
    const rosa = await newAdmin();
    const p = await stack.http('POST', '/dashboard/approval-policy', {
      token: pepe.token,
      body: { policy: { rules: [], otherwise: { action: 'ALLOW' } }, note: 'Sin reglas', totpCode: code(pepe) },
    });
    expect(p.status).toBe(201);
    const c = await stack.http('POST', `/dashboard/approval-policy/${p.body.id}/cancel`, { token: rosa.token, body: { totpCode: code(rosa) } });
    expect(c.status).toBe(200);
    // Versions 1 and 2 were adopted by the tests above: this proposal is version 3.
    expect(c.body).toMatchObject({ version: 3, status: 'CANCELLED', decidedBy: rosa.email, effectiveAt: null });
    expect((await stack.http('GET', '/approval-policy', { token: co.readKey })).body).toMatchObject({ inForce: { version: 2 }, proposed: null });
    const versions = await stack.http('GET', '/approval-policy/versions?limit=1', { token: co.readKey });
    expect(versions.status).toBe(200);
    expect(versions.body).toMatchObject({ items: [{ version: 3, status: 'CANCELLED' }], nextBeforeVersion: 3 });
    const older = await stack.http('GET', '/approval-policy/versions?limit=2&beforeVersion=3', { token: co.readKey });
    expect(older.body).toMatchObject({
      items: [
        { version: 2, status: 'APPROVED' },
        { version: 1, status: 'APPROVED' },
      ],
      nextBeforeVersion: null,
    });
  });
});
