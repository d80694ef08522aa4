import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { checkDocumented } from '../support/openapi-check.js';

const SHOTS = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'wallet-e2e-screenshots');
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const PASSWORD = 'Clave-segura-2026!';

type Stack = Awaited<ReturnType<typeof startStack>>;
interface User {
  id: string;
  email: string;
  totpSecret: string;
}

/** The authenticator app: RFC 6238 (SHA-1, 6 digits, 30 s) from the base32 secret the admin API handed out. */
const totp = (u: User, offsetMs = 0) =>
  new TOTP({ secret: Secret.fromBase32(u.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + offsetMs });

/** A 6-digit code that is valid in none of the steps around now (the server accepts ±1 step). */
function wrongCode(u: User): string {
  const near = new Set([-90_000, -60_000, -30_000, 0, 30_000, 60_000, 90_000].map((o) => totp(u, o)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!near.has(c)) return c;
  }
}

/** Integer centavos as the page shows them: `$ 1.234.567,89`. */
const cop = (c: bigint) => `$ ${(c / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${(c % 100n).toString().padStart(2, '0')}`;

/**
 * The company dashboard in a real (headless) Chromium against the whole stack: two operators log
 * in and sign a multi-signature Bre-B transfer with TOTP codes until it completes; a third rejects
 * another one; a wrong code and a wrong password show the API's Spanish messages; two more sign a
 * bulk payout on both rails (one approval for the whole batch) until every line is paid.
 */
describe('company dashboard in Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let companyId: string;
  let companyName: string;
  let writeKey: string;
  let readKey: string;
  const users: User[] = [];
  const contexts: BrowserContext[] = [];
  /** Console errors and CSP violations seen by any page: the page must run clean under its CSP. */
  const pageProblems: string[] = [];
  /** Every answer the browser gets from the gateway (the page, its assets, the API calls of its script), checked against GET /openapi.json. */
  const browserChecks: Array<Promise<void>> = [];
  const undocumented: string[] = [];
  let checkedAnswers = 0;
  function checkAnswersOf(page: Page): void {
    page.on('response', (r) => {
      if (!r.url().startsWith(`${stack.gateway.url}/`)) return;
      browserChecks.push(
        (async () => {
          const u = new URL(r.url());
          const media = (r.headers()['content-type'] ?? '').split(';')[0]!.trim();
          const text = /json$|^text\//.test(media) ? await r.text().catch(() => null) : undefined;
          if (text === null) return; // the page moved on before the body could be read
          await checkDocumented(stack.gateway.url, {
            method: r.request().method(),
            path: `${u.pathname}${u.search}`,
            status: r.status(),
            headers: new Headers(r.headers()),
            text,
          });
          checkedAnswers++;
        })().catch((err: Error) => {
          undocumented.push(err.message);
        }),
      );
    });
  }

  const tx = (id: string) => stack.http('GET', `/wallets/transactions/${id}`, { token: readKey });
  const brebBalance = async () => {
    const r = await stack.http('GET', '/wallets/balance', { token: readKey });
    return r.body.wallets.find((w: any) => w.rail === 'BREB');
  };

  /** A multi-signature Bre-B send: answered 200 AWAITING_APPROVAL with the approval's id. */
  async function sendBreb(amount: number, reference: string, keyValue = '3001112233') {
    const key = await stack.http('POST', '/transfers/resolve-key', { token: writeKey, body: { keyValue } });
    expect(key.status).toBe(200);
    const r = await stack.http('POST', '/transfers/send', {
      token: writeKey,
      body: {
        amount,
        reference,
        description: 'Pago de prueba del panel',
        destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
        targetName: key.body.recipient.fullName,
        targetDocument: key.body.recipient.idValue,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'AWAITING_APPROVAL', approvalId: expect.any(String), threshold: 2, amount });
    return {
      transactionId: r.body.id as string,
      approvalId: r.body.approvalId as string,
      targetName: key.body.recipient.fullName as string,
      targetDocument: key.body.recipient.idValue as string,
    };
  }

  async function openDashboard(): Promise<Page> {
    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1100, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 401/.test(m.text())) pageProblems.push(m.text());
    });
    page.on('pageerror', (e) => pageProblems.push(String(e)));
    checkAnswersOf(page);
    const res = await page.goto(`${stack.gateway.url}/dashboard`);
    expect(res?.status()).toBe(200);
    const headers = res!.headers();
    expect(headers['content-security-policy']).toBe(CSP);
    expect(headers['cache-control']).toBe('no-store');
    await page.getByRole('heading', { name: 'Iniciar sesión' }).waitFor();
    return page;
  }

  async function logIn(page: Page, u: User, company = companyName): Promise<void> {
    await page.getByLabel('Correo electrónico').fill(u.email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('user-email').filter({ hasText: u.email }).waitFor();
    expect(await page.getByTestId('company-name').textContent()).toBe(company);
    expect(await page.getByTestId('user-role').textContent()).toBe('Operador');
  }

  const card = (page: Page, approvalId: string) => page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
  const text = async (page: Page, approvalId: string, testId: string) => (await card(page, approvalId).getByTestId(testId).textContent())?.trim();
  /** Waits until the card's result message says something containing `part`, and returns it. */
  async function resultOf(page: Page, approvalId: string, part: string): Promise<string> {
    const el = card(page, approvalId).getByTestId('approval-result').filter({ hasText: part });
    await el.waitFor();
    return (await el.textContent())!.trim();
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // One client IP plays every user and the API client: lift the per-IP login, financial and read
    // limits (the batch test polls the batch and reads balances while two pages read their lists).
    stack = await startStack({ transfers: true, gatewayEnv: { RATE_LIMIT_AUTHENTICATION: '100', RATE_LIMIT_FINANCIAL: '100', RATE_LIMIT_READS: '2000' } });
    browser = await launchChromium();

    companyName = 'Panel <Ñandú> S.A.S.'; // shown as text, never parsed as markup
    const c = await stack.admin('POST', '/admin/companies', {
      name: companyName,
      nit: `901${Math.floor(Math.random() * 1e6)}-2`,
      taxRegime: 'COMMON',
      multiSigThreshold: 2,
    });
    expect(c.status).toBe(201);
    companyId = c.body.id;
    const w = await stack.admin('POST', `/admin/companies/${companyId}/api-keys`, { scope: 'WRITE', label: 'dashboard-e2e-write' });
    const r = await stack.admin('POST', `/admin/companies/${companyId}/api-keys`, { scope: 'READ', label: 'dashboard-e2e-read' });
    writeKey = w.body.key;
    readKey = r.body.key;
    // A flat Bre-B fee, so the card's fee line is checked on real numbers: $ 350,00 + IVA 19 % = $ 66,50.
    expect((await stack.admin('PUT', '/admin/fees/BREB_OUTFLOW', { fixedFeeCents: 35_000, variableBps: 0, companyId })).status).toBe(200);
    const credit = await stack.admin('POST', `/admin/companies/${companyId}/wallets/BREB/credit`, { amountCents: 500_000_000, reference: 'seed-dashboard' });
    expect(credit.status).toBeLessThan(300);
    // Three operators: a TOTP code is single-use per user (only a later time step passes), so each
    // decision below is made by a different user and no test waits for the next 30 s step.
    for (const name of ['ana', 'luis', 'marta']) {
      const u = await stack.admin('POST', `/admin/companies/${companyId}/users`, {
        email: `${name}.${companyId.slice(0, 8)}@panel.example.co`,
        password: PASSWORD,
        role: 'OPERATOR',
      });
      expect(u.status).toBe(201);
      expect(u.body).toMatchObject({
        id: expect.any(String),
        role: 'OPERATOR',
        totpSecret: expect.stringMatching(/^[A-Z2-7]+=*$/),
        otpauthUrl: expect.stringMatching(/^otpauth:\/\/totp\//),
      });
      users.push({ id: u.body.id, email: u.body.email, totpSecret: u.body.totpSecret });
    }
  }, 90_000);

  afterEach(async () => {
    await Promise.all(browserChecks.splice(0));
    expect(undocumented.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await stack?.stop();
  });

  it('a wrong password shows the Spanish message and no session is kept', async () => {
    const page = await openDashboard();
    await page.getByLabel('Correo electrónico').fill(users[0]!.email);
    await page.getByLabel('Contraseña').fill('no-es-la-clave');
    await page.getByRole('button', { name: 'Ingresar' }).click();
    const msg = page.getByTestId('login-message').filter({ hasText: ERRORS.INVALID_CREDENTIALS.message });
    await msg.waitFor();
    expect(await page.getByTestId('approval-list').isVisible()).toBe(false);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await shot(page, 'login-error');
  });

  it('two operators sign with TOTP codes in their browsers and the transfer completes', async () => {
    const amount = 123_456_789; // $ 1.234.567,89
    const t = await sendBreb(amount, 'FAC-2026-0042');
    const [ana, luis] = [users[0]!, users[1]!];

    // Ana: sees the approval, formatted, with nobody having signed.
    const pageA = await openDashboard();
    await logIn(pageA, ana);
    await card(pageA, t.approvalId).waitFor();
    expect(await text(pageA, t.approvalId, 'approval-amount')).toBe('$ 1.234.567,89');
    expect(await text(pageA, t.approvalId, 'approval-rail')).toBe('Bre-B');
    expect(await text(pageA, t.approvalId, 'approval-status')).toBe('Pendiente');
    expect(await text(pageA, t.approvalId, 'approval-target-name')).toBe(t.targetName);
    expect(await text(pageA, t.approvalId, 'approval-target-document')).toBe(t.targetDocument);
    expect(await text(pageA, t.approvalId, 'approval-reference')).toBe('FAC-2026-0042');
    expect(await text(pageA, t.approvalId, 'approval-fees')).toBe('$ 350,00 + $ 66,50');
    expect(await text(pageA, t.approvalId, 'approval-created')).toMatch(/\d{4}/);
    expect(await text(pageA, t.approvalId, 'approval-expires')).toMatch(/\d{4}/);
    expect(await text(pageA, t.approvalId, 'approval-signatures')).toBe('Firmas: 0 de 2');
    await shot(pageA, 'pending');

    // A wrong code: the API's Spanish message, nothing signed.
    const cardA = card(pageA, t.approvalId);
    await cardA.getByLabel('Código TOTP').fill(wrongCode(ana));
    await cardA.getByRole('button', { name: 'Firmar' }).click();
    expect(await resultOf(pageA, t.approvalId, ERRORS.INVALID_TOTP_CODE.message)).toBe(ERRORS.INVALID_TOTP_CODE.message);
    await shot(pageA, 'wrong-totp');
    expect(await text(pageA, t.approvalId, 'approval-signatures')).toBe('Firmas: 0 de 2');

    // The right code: 1 of 2, Ana listed, the transfer still waits.
    await cardA.getByLabel('Código TOTP').fill(totp(ana));
    await cardA.getByRole('button', { name: 'Firmar' }).click();
    expect(await resultOf(pageA, t.approvalId, 'Firma registrada')).toContain('1 de 2');
    expect(await text(pageA, t.approvalId, 'approval-signatures')).toBe('Firmas: 1 de 2');
    expect(await text(pageA, t.approvalId, 'approval-signers')).toContain(ana.email);
    expect(await cardA.getByRole('button', { name: 'Firmar' }).isDisabled()).toBe(true); // she already signed
    await shot(pageA, 'signed-1-of-2');
    expect((await tx(t.transactionId)).body.status).toBe('AWAITING_APPROVAL');

    // The session survives a reload (sessionStorage), and the page still shows 1 of 2.
    await pageA.reload();
    await card(pageA, t.approvalId).waitFor();
    expect(await text(pageA, t.approvalId, 'approval-signatures')).toBe('Firmas: 1 de 2');

    // Luis, in another browser context: sees Ana's signature, signs, quorum.
    const pageL = await openDashboard();
    await logIn(pageL, luis);
    await card(pageL, t.approvalId).waitFor();
    expect(await text(pageL, t.approvalId, 'approval-signatures')).toBe('Firmas: 1 de 2');
    expect(await text(pageL, t.approvalId, 'approval-signers')).toContain(ana.email);
    const cardL = card(pageL, t.approvalId);
    await cardL.getByLabel('Código TOTP').fill(totp(luis));
    await cardL.getByRole('button', { name: 'Firmar' }).click();
    expect(await resultOf(pageL, t.approvalId, 'Firma registrada')).toContain('Se completaron las 2 firmas');
    expect(await text(pageL, t.approvalId, 'approval-signatures')).toBe('Firmas: 2 de 2');
    expect(await text(pageL, t.approvalId, 'approval-status')).toBe('Aprobada');
    await shot(pageL, 'signed-2-of-2');

    // The sandbox rail confirms the Bre-B payment (its confirm delay is shortened by startStack).
    const done = await eventually(
      async () => {
        const r = await tx(t.transactionId);
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      20_000,
      200,
    );
    expect(done).toMatchObject({ id: t.transactionId, status: 'COMPLETED', amount: String(amount) });

    // The approved filter lists it; the pending one no longer does.
    await pageL.getByTestId('status-filter').selectOption('APPROVED');
    await card(pageL, t.approvalId).waitFor();
    expect(await text(pageL, t.approvalId, 'approval-status')).toBe('Aprobada');
    await pageL.getByTestId('status-filter').selectOption('PENDING');
    await pageL.getByTestId('list-message').filter({ hasText: 'No hay transferencias pendientes de aprobación.' }).waitFor();
    expect(await card(pageL, t.approvalId).count()).toBe(0);

    // A session ended elsewhere (its token logged out through the API): the next call goes back to the login form.
    const token = await pageL.evaluate(() => JSON.parse(sessionStorage.getItem('wallet.dashboard.session') ?? '{}').token as string);
    expect((await stack.http('POST', '/auth/logout', { token })).status).toBe(204);
    await pageL.getByRole('button', { name: 'Actualizar' }).click();
    await pageL.getByRole('heading', { name: 'Iniciar sesión' }).waitFor();
    expect(await pageL.getByTestId('login-message').textContent()).toBeTruthy();
    expect(await pageL.evaluate(() => sessionStorage.length)).toBe(0);

    // Ana logs out with the button.
    await pageA.getByRole('button', { name: 'Cerrar sesión' }).click();
    await pageA.getByRole('heading', { name: 'Iniciar sesión' }).waitFor();
    expect(await pageA.evaluate(() => sessionStorage.length)).toBe(0);
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('an operator rejects with a reason: the transfer fails and the hold is released', async () => {
    const before = await brebBalance();
    const t = await sendBreb(4_200_000, 'FAC-2026-0043', '3005556677');
    const held = await brebBalance();
    expect(BigInt(held.availableCents)).toBeLessThan(BigInt(before.availableCents));
    const marta = users[2]!;

    const page = await openDashboard();
    await logIn(page, marta);
    await card(page, t.approvalId).waitFor();
    expect(await text(page, t.approvalId, 'approval-amount')).toBe('$ 42.000,00');
    const c = card(page, t.approvalId);
    await c.getByLabel('Código TOTP').fill(totp(marta));
    await c.getByLabel('Motivo del rechazo (opcional)').fill('Cuenta destino <no verificada>');
    await c.getByRole('button', { name: 'Rechazar' }).click();
    expect(await resultOf(page, t.approvalId, 'rechazada')).toContain('Transferencia rechazada');
    expect(await text(page, t.approvalId, 'approval-status')).toBe('Rechazada');
    await shot(page, 'rejected');

    const done = await eventually(
      async () => {
        const r = await tx(t.transactionId);
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      20_000,
      200,
    );
    expect(done.status).toBe('FAILED');
    const after = await eventually(
      async () => {
        const b = await brebBalance();
        return b.availableCents === before.availableCents ? b : undefined;
      },
      10_000,
      100,
    );
    expect(after.pendingOutCents).toBe(before.pendingOutCents);

    await page.getByTestId('status-filter').selectOption('REJECTED');
    await card(page, t.approvalId).waitFor();
    expect(await text(page, t.approvalId, 'approval-status')).toBe('Rechazada');
    expect(await text(page, t.approvalId, 'approval-reject-reason')).toBe('Cuenta destino <no verificada>');
    await shot(page, 'rejected-filter');
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('a VIEWER sees the pending approval but gets no way to sign it', async () => {
    const t = await sendBreb(1_000_000, 'FAC-2026-0044');
    const v = await stack.admin('POST', `/admin/companies/${companyId}/users`, {
      email: `visor.${companyId.slice(0, 8)}@panel.example.co`,
      password: PASSWORD,
      role: 'VIEWER',
    });
    expect(v.status).toBe(201);
    const page = await openDashboard();
    await page.getByLabel('Correo electrónico').fill(v.body.email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await card(page, t.approvalId).waitFor();
    expect(await page.getByTestId('user-role').textContent()).toBe('Consulta');
    expect(await text(page, t.approvalId, 'approval-amount')).toBe('$ 10.000,00');
    expect(await text(page, t.approvalId, 'approval-readonly')).toContain('no firmarlas');
    expect(await card(page, t.approvalId).getByLabel('Código TOTP').count()).toBe(0);
    expect(await card(page, t.approvalId).getByRole('button').count()).toBe(0);
  });

  it('a batch on both rails: one approval, two operators sign it in their browsers, every line is paid and the wallets are debited exactly', async () => {
    // Its own company, so the balances below move by this batch only.
    const name = 'Lotes <Ñandú> S.A.S.';
    const c = await stack.admin('POST', '/admin/companies', {
      name,
      nit: `902${Math.floor(Math.random() * 1e6)}-3`,
      taxRegime: 'COMMON',
      multiSigThreshold: 2,
    });
    expect(c.status).toBe(201);
    const id = c.body.id as string;
    const write = (await stack.admin('POST', `/admin/companies/${id}/api-keys`, { scope: 'WRITE', label: 'lotes-write' })).body.key as string;
    const read = (await stack.admin('POST', `/admin/companies/${id}/api-keys`, { scope: 'READ', label: 'lotes-read' })).body.key as string;
    expect((await stack.admin('PUT', '/admin/fees/BREB_OUTFLOW', { fixedFeeCents: 35_000, variableBps: 0, companyId: id })).status).toBe(200);
    expect((await stack.admin('PUT', '/admin/fees/ACH_OUTFLOW', { fixedFeeCents: 50_000, variableBps: 0, companyId: id })).status).toBe(200);
    for (const rail of ['BREB', 'ACH']) {
      expect(
        (await stack.admin('POST', `/admin/companies/${id}/wallets/${rail}/credit`, { amountCents: 900_000_000, reference: `seed-lotes-${rail}` })).status,
      ).toBeLessThan(300);
    }
    const signers: User[] = [];
    for (const who of ['pedro', 'sofia']) {
      const u = await stack.admin('POST', `/admin/companies/${id}/users`, {
        email: `${who}.${id.slice(0, 8)}@lotes.example.co`,
        password: PASSWORD,
        role: 'OPERATOR',
      });
      expect(u.status).toBe(201);
      signers.push({ id: u.body.id, email: u.body.email, totpSecret: u.body.totpSecret });
    }
    const balances = async () =>
      Object.fromEntries(
        (await stack.http('GET', '/wallets/balance', { token: read })).body.wallets.map(
          (w: { rail: string; availableCents: string; pendingOutCents: string }) => [
            w.rail,
            { available: BigInt(w.availableCents), pendingOut: BigInt(w.pendingOutCents) },
          ],
        ),
      ) as Record<'BREB' | 'ACH', { available: bigint; pendingOut: bigint }>;

    const lines = [];
    for (const [keyValue, amount, reference] of [
      ['3001230001', 12_345_678, 'NOM-0001'],
      ['3001230002', 2_500_000, 'NOM-0002'],
    ] as const) {
      const k = await stack.http('POST', '/transfers/resolve-key', { token: write, body: { keyValue } });
      expect(k.status).toBe(200);
      lines.push({
        amount,
        reference,
        destination: { brebKey: { type: k.body.keyType, value: k.body.keyValue } },
        targetName: k.body.recipient.fullName,
        targetDocument: k.body.recipient.idValue,
      });
    }
    for (const [accountNumber, amount, reference] of [
      ['12345678901', 7_000_000, 'NOM-0003'],
      ['23456789012', 150_050, 'NOM-0004'],
    ] as const) {
      lines.push({
        amount,
        reference,
        destination: {
          bankAccount: {
            bankId: 1,
            accountTypeId: 20,
            accountNumber,
            documentTypeId: 1,
            documentNumber: '1020304050',
            holderFirstName: 'Carlos',
            holderLastName: 'Rodríguez',
          },
        },
      });
    }
    const reference = `NOMINA-${id.slice(0, 8)}`;
    const before = await balances();
    const created = await stack.http('POST', '/transfers/batches', { token: write, body: { reference, description: 'Nómina de prueba', items: lines } });
    expect([created.status, created.body.status, created.body.itemCount]).toEqual([201, 'VALIDATED', 4]);
    const exec = await stack.http('POST', `/transfers/batches/${created.body.id}/execute`, { token: write });
    expect(exec.status).toBe(202);
    const batch = exec.body;
    expect(batch).toMatchObject({ status: 'AWAITING_APPROVAL', threshold: 2, approval: { status: 'PENDING', threshold: 2, signatures: [] } });
    const total = Object.fromEntries(batch.totals.map((t: { rail: string; total: number }) => [t.rail, BigInt(t.total)])) as Record<'BREB' | 'ACH', bigint>;
    expect(total).toEqual({ BREB: 14_845_678n + 2n * 41_650n, ACH: 7_150_050n + 2n * 59_500n }); // fee + 19 % IVA per line
    const held = await balances();
    for (const rail of ['BREB', 'ACH'] as const) {
      expect(before[rail].available - held[rail].available).toBe(total[rail]);
      expect(held[rail].pendingOut - before[rail].pendingOut).toBe(total[rail]);
    }
    const apiItems = (await stack.http('GET', `/transfers/batches/${batch.id}/items`, { token: read })).body.items as Array<{
      item: number;
      targetName: string;
      destination: string;
      amount: number;
      status: string;
    }>;
    expect(apiItems.map((i) => i.status)).toEqual(['AWAITING_APPROVAL', 'AWAITING_APPROVAL', 'AWAITING_APPROVAL', 'AWAITING_APPROVAL']);

    const batchCard = (page: Page) => page.locator(`[data-testid="batch"][data-batch-id="${batch.id}"]`);
    const inCard = async (page: Page, testId: string) => (await batchCard(page).getByTestId(testId).textContent())?.trim();
    const inDetail = async (page: Page, testId: string) => (await page.getByTestId('batch-detail').getByTestId(testId).first().textContent())?.trim();
    const detailResult = async (page: Page, part: string) => {
      const el = page.getByTestId('batch-detail').getByTestId('batch-result').filter({ hasText: part });
      await el.waitFor();
      return (await el.textContent())!.trim();
    };

    // Pedro: the list shows the batch with its count, totals per wallet, signatures and deadline.
    const [pedro, sofia] = [signers[0]!, signers[1]!];
    const pageP = await openDashboard();
    await logIn(pageP, pedro, name);
    await pageP.getByRole('heading', { name: 'Lotes por aprobar' }).waitFor();
    await batchCard(pageP).waitFor();
    expect(await inCard(pageP, 'batch-reference')).toBe(reference);
    expect(await inCard(pageP, 'batch-count')).toBe('4');
    expect(await inCard(pageP, 'batch-total-BREB')).toBe(cop(total.BREB));
    expect(await inCard(pageP, 'batch-total-ACH')).toBe(cop(total.ACH));
    expect(await inCard(pageP, 'batch-signatures')).toBe('0 de 2');
    expect(await inCard(pageP, 'batch-expires')).toMatch(/\d{4}/);
    await shot(pageP, 'batch-list');

    // The detail: totals, count, and every line in the table.
    await batchCard(pageP).getByRole('button', { name: 'Ver lote' }).click();
    await pageP.getByTestId('batch-title').filter({ hasText: reference }).waitFor();
    expect(await inDetail(pageP, 'batch-detail-count')).toBe('4');
    expect(await inDetail(pageP, 'batch-detail-total')).toBe(cop(total.BREB + total.ACH));
    expect(await inDetail(pageP, 'batch-detail-status')).toBe('Esperando firmas');
    const totalRows = pageP.getByTestId('batch-total-row');
    expect(await totalRows.count()).toBe(2);
    expect((await pageP.locator('[data-testid="batch-total-row"][data-rail="BREB"] [data-testid="total-total"]').textContent())?.trim()).toBe(cop(total.BREB));
    expect((await pageP.locator('[data-testid="batch-total-row"][data-rail="ACH"] [data-testid="total-count"]').textContent())?.trim()).toBe('2');
    const rows = pageP.getByTestId('batch-item-row');
    await rows.nth(3).waitFor();
    expect(await rows.count()).toBe(4);
    for (const [n, i] of apiItems.entries()) {
      const row = rows.nth(n);
      expect((await row.getByTestId('item-line').textContent())?.trim()).toBe(String(i.item));
      expect((await row.getByTestId('item-recipient').textContent())?.trim()).toBe(i.targetName || '—');
      expect((await row.getByTestId('item-destination').textContent())?.trim()).toContain(i.destination);
      expect((await row.getByTestId('item-amount').textContent())?.trim()).toBe(cop(BigInt(i.amount)));
      expect((await row.getByTestId('item-status').textContent())?.trim()).toBe('Esperando firmas');
    }
    expect((await rows.nth(0).getByTestId('item-amount').textContent())?.trim()).toBe('$ 123.456,78');
    expect(await inDetail(pageP, 'batch-detail-signatures')).toBe('Firmas: 0 de 2');
    await shot(pageP, 'batch-detail');

    const detailP = pageP.getByTestId('batch-detail');
    await detailP.getByLabel('Código TOTP').fill(totp(pedro));
    await detailP.getByRole('button', { name: 'Firmar' }).click();
    expect(await detailResult(pageP, 'Firma registrada')).toContain('1 de 2');
    expect(await inDetail(pageP, 'batch-detail-signatures')).toBe('Firmas: 1 de 2');
    expect(await inDetail(pageP, 'batch-detail-signers')).toContain(pedro.email);
    expect(await detailP.getByRole('button', { name: 'Firmar' }).isDisabled()).toBe(true);
    await shot(pageP, 'batch-signed-1-of-2');
    expect((await stack.http('GET', `/transfers/batches/${batch.id}`, { token: read })).body.status).toBe('AWAITING_APPROVAL');

    // A VIEWER of the company sees the batch and its lines, with no way to sign it.
    const v = await stack.admin('POST', `/admin/companies/${id}/users`, {
      email: `visor.${id.slice(0, 8)}@lotes.example.co`,
      password: PASSWORD,
      role: 'VIEWER',
    });
    expect(v.status).toBe(201);
    const pageV = await openDashboard();
    await pageV.getByLabel('Correo electrónico').fill(v.body.email);
    await pageV.getByLabel('Contraseña').fill(PASSWORD);
    await pageV.getByRole('button', { name: 'Ingresar' }).click();
    await batchCard(pageV).waitFor();
    await batchCard(pageV).getByRole('button', { name: 'Ver lote' }).click();
    await pageV.getByTestId('batch-item-row').nth(3).waitFor();
    expect(await inDetail(pageV, 'batch-readonly')).toContain('no firmarlos');
    expect(await pageV.getByTestId('batch-detail').getByLabel('Código TOTP').count()).toBe(0);
    expect(await pageV.getByTestId('batch-detail').getByRole('button', { name: 'Firmar' }).count()).toBe(0);

    // Sofía: sees Pedro's signature, signs, quorum: every line is dispatched.
    const pageS = await openDashboard();
    await logIn(pageS, sofia, name);
    await batchCard(pageS).waitFor();
    expect(await inCard(pageS, 'batch-signatures')).toBe('1 de 2');
    await batchCard(pageS).getByRole('button', { name: 'Ver lote' }).click();
    await pageS.getByTestId('batch-title').filter({ hasText: reference }).waitFor();
    expect(await inDetail(pageS, 'batch-detail-signers')).toContain(pedro.email);
    const detailS = pageS.getByTestId('batch-detail');
    await detailS.getByLabel('Código TOTP').fill(totp(sofia));
    await detailS.getByRole('button', { name: 'Firmar' }).click();
    expect(await detailResult(pageS, 'Firma registrada')).toContain('Se completaron las 2 firmas');
    expect(await inDetail(pageS, 'batch-detail-signatures')).toBe('Firmas: 2 de 2');
    expect(await inDetail(pageS, 'batch-approval-status')).toBe('Aprobada');
    await shot(pageS, 'batch-signed-2-of-2');

    // Through the API: the sandbox rails pay every line; each wallet is debited exactly its total.
    const done = await eventually(
      async () => {
        const r = await stack.http('GET', `/transfers/batches/${batch.id}`, { token: read });
        return ['COMPLETED', 'PARTIALLY_FAILED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      30_000,
      500,
    );
    expect(done).toMatchObject({ status: 'COMPLETED', progress: { finished: 4, total: 4, percent: 100 }, approval: { status: 'APPROVED' } });
    expect(done.approval.signatures.map((x: { email: string }) => x.email)).toEqual([pedro.email, sofia.email]);
    const after = await balances();
    for (const rail of ['BREB', 'ACH'] as const) {
      expect(before[rail].available - after[rail].available).toBe(total[rail]);
      expect(after[rail].pendingOut).toBe(before[rail].pendingOut);
    }
    // Back to the list: the batch is no longer waiting.
    await pageS.getByRole('button', { name: 'Volver' }).click();
    await pageS.getByTestId('batch-list-message').filter({ hasText: 'No hay lotes pendientes de aprobación.' }).waitFor();
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('an invited user enrols from the link (own password, secret shown once, first code) and then logs in', async () => {
    const email = `invitada.${companyId.slice(0, 8)}@panel.example.co`;
    const inv = await stack.admin('POST', `/admin/companies/${companyId}/users`, { email, role: 'OPERATOR', invite: true });
    expect(inv.status).toBe(201);
    expect(inv.body).not.toHaveProperty('totpSecret');
    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1100, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    // 401 (the wrong code) and 410 (the spent link, at the end) are answers this test asks for.
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of (401|410)/.test(m.text())) pageProblems.push(m.text());
    });
    page.on('pageerror', (e) => pageProblems.push(String(e)));
    const res = await page.goto(`${stack.gateway.url}${inv.body.invitationUrl}`);
    expect(res?.headers()['content-security-policy']).toBe(CSP);
    await page.getByRole('heading', { name: 'Activar tu cuenta' }).waitFor();
    await page.getByTestId('enrol-intro').filter({ hasText: email }).waitFor();
    expect(page.url()).not.toContain('winv_'); // the token leaves the address bar at once
    expect(await page.getByTestId('enrol-intro').textContent()).toContain(companyName);

    await page.getByLabel('Nueva clave', { exact: true }).fill('Clave-propia-2026!');
    await page.getByLabel('Repite la nueva clave').fill('Otra-cosa-2026!!');
    await page.getByRole('button', { name: 'Continuar' }).click();
    await page.getByTestId('enrol-message').filter({ hasText: 'no coinciden' }).waitFor();
    await page.getByLabel('Repite la nueva clave').fill('Clave-propia-2026!');
    await page.getByRole('button', { name: 'Continuar' }).click();
    const shown = page.getByTestId('enrol-secret');
    await shown.waitFor();
    const secret = (await shown.textContent())!.replace(/\s+/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await page.getByTestId('enrol-otpauth').getAttribute('href')).toMatch(new RegExp(`^otpauth://totp/.*secret=${secret}`));
    await shot(page, 'enrolment-secret');
    const enrolled: User = { id: inv.body.id, email, totpSecret: secret };
    await page.getByLabel('Código de verificación').fill(wrongCode(enrolled));
    await page.getByRole('button', { name: 'Activar cuenta' }).click();
    await page.getByTestId('enrol-message').filter({ hasText: ERRORS.INVALID_TOTP_CODE.message }).waitFor();
    await page.getByLabel('Código de verificación').fill(totp(enrolled));
    await page.getByRole('button', { name: 'Activar cuenta' }).click();
    await page.getByTestId('login-message').filter({ hasText: 'Tu cuenta está activa' }).waitFor();
    expect(await page.getByLabel('Correo electrónico').inputValue()).toBe(email);
    await page.getByLabel('Contraseña').fill('Clave-propia-2026!');
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('user-email').filter({ hasText: email }).waitFor();
    // The link is spent: opened again, it says so.
    await page.goto(`${stack.gateway.url}${inv.body.invitationUrl}`);
    await page.getByTestId('enrol-message').filter({ hasText: ERRORS.INVITATION_USED.message }).waitFor();
  });

  it('no page logged an error or a CSP violation', () => {
    expect(pageProblems).toEqual([]);
  });

  it('every answer the browser got from the gateway was one GET /openapi.json declares', () => {
    expect(undocumented).toEqual([]);
    // Page, assets, login, the session user, approvals, signatures: the check did run.
    expect(checkedAnswers).toBeGreaterThan(10);
  });
});
