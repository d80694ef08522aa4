import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { checkDocumented } from '../support/openapi-check.js';
import type { ReconciliationDouble } from '../support/reconciliation-double.js';

const SHOTS = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'wallet-e2e-screenshots');
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const PASSWORD = 'Clave-de-operadora-2026';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * The operators' reconciliation page (/admin/conciliaciones) in a real headless Chromium against the
 * real gateway; the reconciliation service is the TEST DOUBLE of support/reconciliation-double.ts
 * (real mTLS gRPC, state in memory). A named operator logs in with password + TOTP, sees a run in
 * the list, opens it, reads a break's two sides and its difference in COP, resolves it with
 * "explicar", and starts a run. Every answer the browser gets is checked against /openapi.json.
 */
describe('reconciliation page in Chromium', () => {
  let stack: Stack;
  let recon: ReconciliationDouble;
  let browser: Browser;
  /** Two named operators: a TOTP code is single-use per operator and time step, so each test logs in as its own. */
  const operators: Array<{ email: string; totpSecret: string }> = [];
  const pageProblems: string[] = [];
  const checks: Array<Promise<void>> = [];
  const undocumented: string[] = [];
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `conciliaciones-${name}.png`), fullPage: true });
  const code = (o: { totpSecret: string }) => new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(o.totpSecret) }).generate();

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // Three operators enrol and four logins follow (the second operator's approval among them): more than the
    // five a minute POST /admin/auth/* allows one address in production.
    stack = await startStack({ reconciliation: 'double', gatewayEnv: { RATE_LIMIT_ADMIN_LOGIN: '30' } });
    recon = stack.reconciliationDouble!;
    browser = await launchChromium();
    // A named operator: invited with the shared token, enrolled (password; the TOTP secret is shown once).
    for (const name of ['conciliadora', 'tesorero', 'auditora']) {
      const email = `${name}.${Date.now()}@billetera.co`;
      const invited = await stack.admin('POST', '/admin/operators', { name: `${name} <Ñ>`, email });
      expect(invited.status).toBe(201);
      const enrolled = await stack.http('POST', '/admin/auth/enroll', { body: { enrollmentToken: invited.body.enrollmentToken, password: PASSWORD } });
      expect(enrolled.status).toBe(200);
      operators.push({ email, totpSecret: enrolled.body.totpSecret });
    }
  }, 90_000);
  afterEach(async () => {
    await Promise.all(checks.splice(0));
    expect(undocumented.splice(0)).toEqual([]);
    expect(pageProblems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function openPage(): Promise<Page> {
    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.on('console', (m) => {
      // 401/409: answers the page shows; 403: the requester's own approval refused (SAME_OPERATOR), asserted below
      if (m.type() === 'error' && !/status of (401|403|409)/.test(m.text())) pageProblems.push(m.text());
    });
    page.on('pageerror', (e) => pageProblems.push(String(e)));
    page.on('response', (r) => {
      if (!r.url().startsWith(`${stack.gateway.url}/`)) return;
      checks.push(
        (async () => {
          const u = new URL(r.url());
          const media = (r.headers()['content-type'] ?? '').split(';')[0]!.trim();
          const text = /json$|^text\//.test(media) ? await r.text().catch(() => null) : undefined;
          if (text === null) return;
          await checkDocumented(stack.gateway.url, {
            method: r.request().method(),
            path: `${u.pathname}${u.search}`,
            status: r.status(),
            headers: new Headers(r.headers()),
            text,
          });
        })().catch((err: Error) => {
          undocumented.push(err.message);
        }),
      );
    });
    const res = await page.goto(`${stack.gateway.url}/admin/conciliaciones`);
    expect(res?.status()).toBe(200);
    expect(res!.headers()['content-security-policy']).toBe(CSP);
    expect(res!.headers()['cache-control']).toBe('no-store');
    await page.getByRole('heading', { name: 'Iniciar sesión' }).waitFor();
    return page;
  }

  /** The page, logged in as `operator` (password + TOTP), showing the breaks of `runId` (rail and date filters). */
  async function breaksAs(operator: { email: string; totpSecret: string }, run: { id?: string; rail: string; date: string }): Promise<Page> {
    const page = await openPage();
    await page.getByLabel('Correo electrónico').fill(operator.email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByLabel('Código de verificación').fill(code(operator));
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('operator-email').filter({ hasText: operator.email }).waitFor();
    await page.getByTestId('filter-rail').selectOption(run.rail);
    await page.getByTestId('filter-date').fill(run.date);
    await page.getByRole('button', { name: 'Filtrar' }).click();
    await page
      .locator(run.id ? `[data-testid="run-row"][data-run-id="${run.id}"]` : '[data-testid="run-row"]')
      .first()
      .getByRole('button', { name: /Ver detalle/ })
      .click();
    await page.getByTestId('break').first().waitFor();
    return page;
  }

  it('logs an operator in, lists a run, shows a break with both sides and the difference in COP, and resolves it with "explicar"', async () => {
    const run = recon.seedRun('ach', '2026-11-20', [
      {
        kind: 'amount_mismatch',
        ourId: 'b6f1c2d0-0000-4000-8000-000000000001',
        providerId: 'ACH-<b>77</b>',
        ours: { amount: '100000', status: 'COMPLETED' },
        theirs: { amount: '1334567', status: '<img src=x onerror=alert(1)>' },
        differenceCents: 123_456_789n,
      },
    ]);
    const brk = recon.breaks.find((b) => b.runId === run.id)!;
    const operator = operators[0]!;
    const page = await openPage();

    // A wrong code: the API's Spanish message, no session kept.
    await page.getByLabel('Correo electrónico').fill(operator.email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByLabel('Código de verificación').fill('000000' === code(operator) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('login-message').filter({ hasText: ERRORS.OPERATOR_AUTH_FAILED.message }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByLabel('Código de verificación').fill(code(operator));
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('operator-email').filter({ hasText: operator.email }).waitFor();

    // The run in the list, with the filters.
    await page.getByTestId('filter-rail').selectOption('ach');
    await page.getByTestId('filter-date').fill('2026-11-20');
    await page.getByRole('button', { name: 'Filtrar' }).click();
    const row = page.locator(`[data-testid="run-row"][data-run-id="${run.id}"]`);
    await row.waitFor();
    expect(await page.getByTestId('run-row').count()).toBe(1);
    expect((await row.getByTestId('run-status').textContent())!.trim()).toBe('Conciliada');
    expect((await row.getByTestId('run-rail').textContent())!.trim()).toBe('ACH');
    expect((await row.getByTestId('run-breaks').textContent())!.trim()).toBe('1 (1 nuevas)');
    await shot(page, 'list');

    // The detail: summary and the break's two sides, the difference in es-CO COP; hostile text stays text.
    await row.getByRole('button', { name: /Ver detalle/ }).click();
    const card = page.locator(`[data-testid="break"][data-break-key="${brk.key}"]`);
    await card.waitFor();
    expect((await page.getByTestId('summary-report').textContent())!).toContain('$ 4.500,00');
    expect((await card.getByTestId('break-difference').textContent())!.trim()).toBe('$ 1.234.567,89');
    expect((await card.getByTestId('break-provider-id').textContent())!.trim()).toBe('ACH-<b>77</b>');
    expect(await card.getByTestId('break-ours').textContent()).toContain('100000');
    expect(await card.getByTestId('break-theirs').textContent()).toContain('<img src=x onerror=alert(1)>');
    expect(await page.locator('img').count()).toBe(0);
    expect((await card.getByTestId('break-status').textContent())!.trim()).toBe('Abierta');
    expect(await page.evaluate('location.hash')).toBe(`#run=${run.id}`);
    await shot(page, 'detail');

    // A note is required; then "explicar" by one operator is a request (docs/security.md I10): the break stays
    // open with the request shown, and the one who asked cannot approve it.
    await card.getByTestId('resolve-action-explain').check();
    await card.getByRole('button', { name: 'Resolver' }).click();
    await card.getByTestId('resolve-result').filter({ hasText: 'escribe una nota' }).waitFor();
    await card.getByLabel(/Nota/).fill('El proveedor reportó el monto con la comisión incluida; confirmado con soporte.');
    await card.getByRole('button', { name: 'Resolver' }).click();
    await page.getByTestId('breaks-message').filter({ hasText: 'espera la aprobación de otro operador' }).waitFor();
    const asked = page.locator(`[data-testid="break"][data-break-key="${brk.key}"]`);
    expect((await asked.getByTestId('break-status').textContent())!.trim()).toBe('Abierta');
    await asked.getByTestId('break-approval').waitFor();
    expect(recon.exceptions.find((e) => e.id === brk.exceptionId)!.status).toBe('OPEN');
    await asked.getByTestId('resolution-approve').click();
    await asked.getByTestId('resolve-result').filter({ hasText: ERRORS.SAME_OPERATOR.message }).waitFor();
    expect(recon.exceptions.find((e) => e.id === brk.exceptionId)!.status).toBe('OPEN');
    await shot(page, 'requested');

    // A second, independent operator approves it: "explicar" resolves it (no entry), the card shows it resolved.
    const second = await breaksAs(operators[2]!, { id: run.id, rail: 'ach', date: '2026-11-20' });
    await second.locator(`[data-testid="break"][data-break-key="${brk.key}"]`).getByTestId('resolution-approve').click();
    await second.getByTestId('breaks-message').filter({ hasText: 'quedó resuelta' }).waitFor();
    const resolved = second.locator(`[data-testid="break"][data-break-key="${brk.key}"]`);
    expect((await resolved.getByTestId('break-status').textContent())!.trim()).toBe('Resuelta');
    expect((await resolved.getByTestId('break-resolution').textContent())!.trim()).toBe('Explicada');
    expect(await resolved.getByTestId('resolve-form').count()).toBe(0);
    const exc = recon.exceptions.find((e) => e.id === brk.exceptionId)!;
    expect(exc).toMatchObject({
      status: 'RESOLVED',
      action: 'explain',
      note: 'El proveedor reportó el monto con la comisión incluida; confirmado con soporte.',
      resolvedBy: expect.stringMatching(/^operator:[^+]+\+operator:[^+]+$/),
    });
    await shot(second, 'resolved');
    await second.context().close();

    // "reejecutar" while the provider still reports it: the API's message, the break stays open.
    const again = recon.seedRun('pse', '2026-11-19', [
      { kind: 'status_mismatch', ourId: 'dep_x', providerId: 'PSE-1', ours: { status: 'ASSIGNED' }, theirs: { status: 'FAILED' }, differenceCents: -30_000n },
    ]);
    const still = recon.breaks.find((b) => b.runId === again.id)!;
    recon.stillPresent.add(still.key);
    await page.getByTestId('filter-rail').selectOption('');
    await page.getByTestId('filter-date').fill('');
    await page.getByRole('button', { name: 'Filtrar' }).click();
    await page
      .locator(`[data-testid="run-row"][data-run-id="${again.id}"]`)
      .getByRole('button', { name: /Ver detalle/ })
      .click();
    const stillCard = page.locator(`[data-testid="break"][data-break-key="${still.key}"]`);
    await stillCard.waitFor();
    expect((await stillCard.getByTestId('break-difference').textContent())!.trim()).toBe('-$ 300,00');
    await stillCard.getByTestId('resolve-action-rerun').check();
    await stillCard.getByLabel(/Nota/).fill('El proveedor dice que corrigió el reporte.');
    await stillCard.getByRole('button', { name: 'Resolver' }).click();
    await stillCard.getByTestId('resolve-result').filter({ hasText: ERRORS.BREAK_STILL_PRESENT.message }).waitFor();
    expect((await stillCard.getByTestId('break-status').textContent())!.trim()).toBe('Abierta');
  });

  it('starts a run for a rail and date; a future date is refused on the page', async () => {
    const operator = operators[1]!;
    // Logged in through the API; the page picks the session up from sessionStorage, as after a reload.
    const login = await stack.http('POST', '/admin/auth/login', { body: { email: operator.email, password: PASSWORD, totpCode: code(operator) } });
    expect(login.status).toBe(200);
    const token = login.body.token as string;
    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota' });
    await context.addInitScript(
      ([t]) => {
        sessionStorage.setItem('wallet.admin.session', JSON.stringify({ token: t, expiresAt: new Date(Date.now() + 600_000).toISOString() }));
      },
      [token],
    );
    const p = await context.newPage();
    p.on('pageerror', (e) => pageProblems.push(String(e)));
    await p.goto(`${stack.gateway.url}/admin/conciliaciones`);
    await p.getByTestId('operator-email').filter({ hasText: operator.email }).waitFor();

    const before = recon.calls.filter((c) => c.method === 'startRun').length;
    await p.getByTestId('start-rail').selectOption('breb');
    await p.getByTestId('start-date').fill('2099-01-01');
    await p.getByRole('button', { name: 'Conciliar' }).click();
    await p.getByTestId('start-message').filter({ hasText: 'no puede ser posterior a hoy' }).waitFor();
    expect(recon.calls.filter((c) => c.method === 'startRun').length).toBe(before);

    await p.getByTestId('start-date').fill('2026-11-21');
    await p.getByRole('button', { name: 'Conciliar' }).click();
    await p.getByTestId('start-message').filter({ hasText: 'en curso' }).waitFor();
    const started = recon.runs.find((r) => r.rail === 'breb' && r.date === '2026-11-21')!;
    expect(started.requestedBy).toMatch(/^operator:/);
    await p.locator(`[data-testid="run-row"][data-run-id="${started.id}"]`).waitFor();
    expect((await p.getByTestId('summary-status').textContent())!.trim()).toBe('En curso');
    await shot(p, 'started');
    await context.close();
  });
});

/**
 * The same page with nothing stood in: the real reconciliation service (stack option
 * `reconciliation: true`), transfer and the sandbox's Bre-B report with an amount discrepancy. The
 * operator starts today's Bre-B run from the page, waits for it to finish, sees the break the
 * discrepancy caused (both sides, the difference in COP) and resolves it with "explicar".
 */
describe('reconciliation page in Chromium, real reconciliation service', () => {
  let stack: Stack;
  let browser: Browser;
  const problems: string[] = [];
  const today = new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    stack = await startStack({ reconciliation: true });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('starts today\'s Bre-B run from the page, shows the break of a report discrepancy and resolves it with "explicar"', async () => {
    const co = await stack.provision('Página Conciliación S.A.S.', { wallets: ['BREB', 'ACH'] });
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 })).status).toBe(200);
    expect(
      (await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 5_000_000, reference: 'seed-recon-page' })).status,
    ).toBeLessThan(300);
    const key = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3001112233' } });
    const sent = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 150_000,
        reference: 'recon-page-1',
        destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
        targetName: key.body.recipient.fullName,
        targetDocument: key.body.recipient.idValue,
      },
    });
    expect(sent.status).toBe(201);
    await eventually(
      async () => (await stack.http('GET', `/wallets/transactions/${sent.body.id}`, { token: co.readKey })).body.status === 'COMPLETED',
      20_000,
      100,
    );
    const injected = await fetch(`${stack.sandbox!.url}/sandbox/reports/breb/${today}/discrepancies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'amount', ref: sent.body.id, amountCents: 160_000 }),
    });
    expect(injected.status).toBe(201);

    const email = `operadora.real.${Date.now()}@billetera.co`;
    const invited = await stack.admin('POST', '/admin/operators', { name: 'Operadora Real', email });
    const enrolled = await stack.http('POST', '/admin/auth/enroll', { body: { enrollmentToken: invited.body.enrollmentToken, password: PASSWORD } });
    expect(enrolled.status).toBe(200);
    // the second operator who approves her resolution (invited by the shared token too: independent of her)
    const approverEmail = `aprobador.real.${Date.now()}@billetera.co`;
    const approverInvited = await stack.admin('POST', '/admin/operators', { name: 'Aprobador Real', email: approverEmail });
    const approverEnrolled = await stack.http('POST', '/admin/auth/enroll', {
      body: { enrollmentToken: approverInvited.body.enrollmentToken, password: PASSWORD },
    });
    expect(approverEnrolled.status).toBe(200);
    const code = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(enrolled.body.totpSecret) }).generate();

    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`${stack.gateway.url}/admin/conciliaciones`);
    await page.getByLabel('Correo electrónico').fill(email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByLabel('Código de verificación').fill(code);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('operator-email').filter({ hasText: email }).waitFor();

    await page.getByTestId('start-rail').selectOption('breb');
    expect(await page.getByTestId('start-date').inputValue()).toBe(today);
    await page.getByRole('button', { name: 'Conciliar' }).click();
    await page.getByTestId('run-summary').waitFor();
    // The run goes on in the background: "Actualizar" until it is reconciled.
    for (let i = 0; i < 100; i++) {
      if ((await page.getByTestId('summary-status').textContent())?.trim() === 'Conciliada') break;
      await new Promise((r) => setTimeout(r, 200));
      await page.getByTestId('run-refresh').click();
      await page.getByTestId('summary-status').waitFor();
    }
    expect((await page.getByTestId('summary-status').textContent())!.trim()).toBe('Conciliada');
    const card = page.getByTestId('break').filter({ hasText: 'Monto distinto' });
    await card.waitFor();
    expect((await card.getByTestId('break-our-id').textContent())!.trim()).toBe(sent.body.id);
    expect((await card.getByTestId('break-difference').textContent())!.trim()).toMatch(/^-?\$ \d{1,3}(\.\d{3})*,\d{2}$/);
    // Both sides, amounts in COP: ours $ 1.500,00, the provider's $ 1.600,00.
    expect(await card.getByTestId('break-ours').textContent()).toContain('$ 1.500,00');
    expect(await card.getByTestId('break-theirs').textContent()).toContain('$ 1.600,00');
    // The runs list and the summary are two requests of one refresh: the run may have ended between
    // them, so the list can still say "En curso". One more refresh, now that the run has ended, must not.
    await page.getByTestId('run-refresh').click();
    await page.locator('[data-testid="run-row"]').first().getByTestId('run-status').filter({ hasText: 'Conciliada' }).waitFor({ timeout: 10_000 });
    expect((await page.locator(`[data-testid="run-row"]`).first().getByTestId('run-status').textContent())!.trim()).toBe('Conciliada');
    await page.screenshot({ path: join(SHOTS, 'conciliaciones-real.png'), fullPage: true });

    await card.getByTestId('resolve-action-explain').check();
    await card.getByLabel(/Nota/).fill('El proveedor cobró una comisión adicional en la línea; confirmado con su soporte.');
    await card.getByRole('button', { name: 'Resolver' }).click();
    await page.getByTestId('breaks-message').filter({ hasText: 'espera la aprobación de otro operador' }).waitFor();
    // the second operator approves it: only then is it resolved
    const secondContext = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1200, height: 900 } });
    const second = await secondContext.newPage();
    second.on('pageerror', (e) => problems.push(String(e)));
    await second.goto(`${stack.gateway.url}/admin/conciliaciones`);
    await second.getByLabel('Correo electrónico').fill(approverEmail);
    await second.getByLabel('Contraseña').fill(PASSWORD);
    const approverCode = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(approverEnrolled.body.totpSecret) }).generate();
    await second.getByLabel('Código de verificación').fill(approverCode);
    await second.getByRole('button', { name: 'Ingresar' }).click();
    await second.getByTestId('operator-email').filter({ hasText: approverEmail }).waitFor();
    await second.getByTestId('filter-rail').selectOption('breb');
    await second.getByTestId('filter-date').fill(today);
    await second.getByRole('button', { name: 'Filtrar' }).click();
    await second
      .locator('[data-testid="run-row"]')
      .first()
      .getByRole('button', { name: /Ver detalle/ })
      .click();
    await second.getByTestId('break').filter({ hasText: 'Monto distinto' }).waitFor();
    await second.getByTestId('break').filter({ hasText: 'Monto distinto' }).getByTestId('resolution-approve').click();
    await second.getByTestId('breaks-message').filter({ hasText: 'quedó resuelta' }).waitFor();
    const resolved = second.getByTestId('break').filter({ hasText: 'Monto distinto' });
    expect((await resolved.getByTestId('break-status').textContent())!.trim()).toBe('Resuelta');
    expect((await resolved.getByTestId('break-resolution').textContent())!.trim()).toBe('Explicada');
    const exc = await stack.admin('GET', '/admin/exceptions?kind=AMOUNT_MISMATCH&status=RESOLVED');
    expect(exc.body.items[0]).toMatchObject({
      action: 'explain',
      resolvedBy: expect.stringMatching(/^operator:[^+]+\+operator:[^+]+$/),
      note: 'El proveedor cobró una comisión adicional en la línea; confirmado con su soporte.',
    });
    expect(problems).toEqual([]);
    expect((await stack.invariants()).violations).toEqual([]);
    await secondContext.close();
    await context.close();
  }, 120_000);
});
