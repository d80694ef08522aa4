import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * docs/security.md "Screening on the destination account", through the real gateway over HTTP: the AML list and the counterparty limits
 * were keyed on the document the client declares, so the same bank account was refused as listed and
 * then paid with one digit added to the document, and its reached day limit was passed the same way.
 * Now they are keyed on the destination account too; each attack is played and refused with the
 * contract's code and Spanish message. The full account number of a listed account never reaches a
 * log line or any schema of the product.
 */
describe('AML and limits on the destination account (issue 36, finding 6)', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;

  const LISTED = '40918273645';
  const DAILY_LIMIT = 200_000;
  const account = (n: number) => `5${String(n).padStart(10, '0')}`;
  const ach = (amount: number, accountNumber: string, documentNumber: string, extra: Record<string, unknown> = {}) => ({
    amount,
    destination: {
      bankAccount: {
        bankId: 1,
        accountTypeId: 20,
        accountNumber,
        documentTypeId: 1,
        documentNumber,
        holderFirstName: 'Ana María',
        holderLastName: 'Pérez Gómez',
      },
    },
    description: 'Pago proveedor',
    ...extra,
  });
  const send = (body: unknown) => stack.http('POST', '/transfers/send', { token: co.writeKey, body });
  const answer = async (body: unknown) => {
    const r = await send(body);
    return { status: r.status, error: r.body?.error ?? null };
  };

  beforeAll(async () => {
    stack = await startStack({ transfers: true, captureLogs: 'trace' });
    co = await stack.provision('Pagos Cuenta S.A.S.', { taxRegime: 'COMMON' });
    // Before the company's keys are used: its limits come with the key's principal.
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000, counterpartyDailyLimitCents: DAILY_LIMIT });
    await stack.admin('PUT', '/admin/fees/ACH_OUTFLOW', { fixedFeeCents: 0, variableBps: 0, companyId: co.id });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 10_000_000, reference: 'seed-ach' });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
  });

  it('a listed bank account is refused whatever document the payout declares; the entry shows it masked', async () => {
    // The account is paid once under its holder's document: the operator learns it is the one to list.
    expect((await send(ach(1_000, LISTED, '1020304050'))).status).toBe(201);
    const entry = await stack.admin('POST', '/admin/aml/blacklist', {
      bankAccount: { bankCode: '1007', accountNumber: LISTED },
      reason: 'Cuenta reportada por la UIAF',
    });
    expect(entry.status).toBe(201);
    expect(entry.body).toEqual({
      id: expect.any(String),
      kind: 'BANK_ACCOUNT',
      documentNumber: null,
      bankAccount: { bankCode: '1007', accountNumberMasked: `****${LISTED.slice(-4)}` },
      name: null,
      reason: 'Cuenta reportada por la UIAF',
      createdAt: expect.any(String),
    });
    expect(entry.text).not.toContain(LISTED);
    try {
      const refused = await send(ach(1_000, LISTED, '1020304050'));
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ error: 'RECIPIENT_BLACKLISTED', message: expect.any(String) });
      // The attack: one digit added to the document, another document, the number with leading zeros, another account type.
      for (const body of [
        ach(1_000, LISTED, '10203040501'),
        ach(1_000, LISTED, '7766554433'),
        ach(1_000, `00${LISTED}`, '7766554433'),
        { ...ach(1_000, LISTED, '7766554433'), destination: { bankAccount: { ...ach(1, LISTED, '7766554433').destination.bankAccount, accountTypeId: 21 } } },
      ]) {
        const r = await send(body);
        expect({ status: r.status, error: r.body.error, message: r.body.message }).toEqual({
          status: 422,
          error: 'RECIPIENT_BLACKLISTED',
          message: refused.body.message,
        });
      }
      // The same number at another bank is another account.
      expect(
        (
          await send({
            ...ach(1_000, LISTED, '7766554433'),
            destination: { bankAccount: { ...ach(1, LISTED, '7766554433').destination.bankAccount, bankId: 14 } },
          })
        ).status,
      ).toBe(201);
    } finally {
      expect((await stack.admin('DELETE', `/admin/aml/blacklist/${entry.body.id}`)).body).toMatchObject({ id: entry.body.id, kind: 'BANK_ACCOUNT' });
    }
    expect((await send(ach(1_000, LISTED, '10203040501'))).status).toBe(201);
  });

  it('the admin body: exactly one of documentNumber and bankAccount, a known bank code, digits; a document entry answers as before', async () => {
    for (const body of [
      { reason: 'x' },
      { documentNumber: '900123456', bankAccount: { bankCode: '1007', accountNumber: '123456789' }, reason: 'x' },
      { bankAccount: { bankCode: '9999', accountNumber: '123456789' }, reason: 'x' },
      { bankAccount: { bankCode: '1007', accountNumber: '12-3456' }, reason: 'x' },
      { bankAccount: { bankCode: '1007', accountNumber: '0000000' }, reason: 'x' },
      { bankAccount: { bankCode: '1007', accountNumber: '123456789', extra: 1 }, reason: 'x' },
    ]) {
      const r = await stack.admin('POST', '/admin/aml/blacklist', body);
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error: 'INVALID_REQUEST' });
    }
    const doc = await stack.admin('POST', '/admin/aml/blacklist', { documentNumber: '8877665544', reason: 'Beneficiario reportado' });
    expect(doc.body).toMatchObject({ kind: 'DOCUMENT', documentNumber: '8877665544', bankAccount: null });
    expect(await answer(ach(1_000, account(1), '8877665544'))).toEqual({ status: 422, error: 'RECIPIENT_BLACKLISTED' });
    await stack.admin('DELETE', `/admin/aml/blacklist/${doc.body.id}`);
  });

  it('the day limit reached with document A: the same account with document B, or A plus a digit, is refused with the limit code', async () => {
    const x = account(2);
    expect((await send(ach(DAILY_LIMIT, x, '1122334455'))).status).toBe(201);
    const b = await send(ach(100, x, '5544332211'));
    expect(b.status).toBe(422);
    expect(b.body).toMatchObject({ error: 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED', message: expect.any(String) });
    expect(await answer(ach(100, x, '11223344551'))).toEqual({ status: 422, error: 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED' });
    expect(await answer(ach(100, `0${x}`, '9988776655'))).toEqual({ status: 422, error: 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED' });
    // Document A at another account is still bound by A's own total.
    expect(await answer(ach(100, account(3), '1122334455'))).toEqual({ status: 422, error: 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED' });
    // Another account under a fresh document has its own room.
    expect(await answer(ach(100, account(3), '5544332211'))).toEqual({ status: 201, error: null });
  });

  it('concurrency: parallel payouts to one account, each under its own document, never exceed the day limit in total', async () => {
    const x = account(4);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => answer(ach(50_000, i % 3 ? x : `000${x}`, String(3_000_000_000 + i)))));
    expect(results.filter((r) => r.status === 201)).toHaveLength(DAILY_LIMIT / 50_000);
    expect(results.filter((r) => r.status !== 201)).toEqual(Array(12 - DAILY_LIMIT / 50_000).fill({ status: 422, error: 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED' }));
  });

  it('a bulk payout screens its lines on the account too', async () => {
    const entry = await stack.admin('POST', '/admin/aml/blacklist', { bankAccount: { bankCode: '1007', accountNumber: LISTED }, reason: 'Cuenta reportada' });
    try {
      const item = (accountNumber: string, documentNumber: string, reference: string) => ({ ...ach(1_000, accountNumber, documentNumber), reference });
      const r = await stack.http('POST', '/transfers/batches', {
        token: co.writeKey,
        body: { mode: 'valid_only', items: [item(LISTED, '6655443322', 'L-1'), item(account(5), '6655443322', 'L-2')] },
      });
      expect(r.status).toBe(201);
      expect(r.body.results).toEqual([
        expect.objectContaining({ item: 1, valid: false, error: 'RECIPIENT_BLACKLISTED' }),
        { item: 2, line: null, valid: true, policyDecision: { policyVersion: 0, ruleId: null, action: 'ALLOW', approvals: 0, roles: [] } },
      ]);
    } finally {
      await stack.admin('DELETE', `/admin/aml/blacklist/${entry.body.id}`);
    }
  });

  it("the listed account's full number is in no log line and in no schema of the product", async () => {
    const leaks = stack.logs().filter((l) => l.includes(LISTED));
    expect(leaks).toEqual([]);
    const { default: pg } = await import('pg');
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows: tables } = await db.query<{ s: string; t: string }>(
        `select table_schema as s, table_name as t from information_schema.tables
          where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema', 'sandbox')`,
      );
      const holding: string[] = [];
      for (const { s, t } of tables) {
        const { rows } = await db.query<{ n: string }>(`select count(*)::text as n from "${s}"."${t}" x where x::text like $1`, [`%${LISTED}%`]);
        if (rows[0]?.n !== '0') holding.push(`${s}.${t}`);
      }
      expect(holding).toEqual([]);
      // The admin audit trail recorded the listing, with the number masked.
      const { rows: audit } = await db.query<{ request: string }>(
        `select request::text as request from gateway.admin_audit where action = 'adminAddAmlEntry' and request::text like '%bankAccount%'`,
      );
      expect(audit.length).toBeGreaterThan(0);
      for (const a of audit) expect(a.request).toContain(`****${LISTED.slice(-4)}`);
    } finally {
      await db.end();
    }
  });
});
