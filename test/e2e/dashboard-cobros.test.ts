import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ERRORS } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { launchChromium } from '../support/browser.js';
import { startStack } from '../support/stack.js';
import { checkDocumented, fetchDocumented } from '../support/openapi-check.js';

const SHOTS = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'wallet-e2e-screenshots');
const PASSWORD = 'Clave-segura-2026!';

type Stack = Awaited<ReturnType<typeof startStack>>;
interface User {
  email: string;
  totpSecret: string;
}

/** The authenticator app: RFC 6238 (SHA-1, 6 digits, 30 s). */
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

/**
 * Cobros in the company dashboard, in a real (headless) Chromium against the whole stack: an
 * operator sees the company's cobro (its QR, key and amount), finds a payment that matched no cobro
 * under «Pagos sin conciliar», types a wrong TOTP code (the API's message, nothing attached) and
 * then the right one: the payment is the cobro's (matched by hand) and leaves the list; then gives part
 * of it back to the payer («Devolver», with another code).
 */
describe('cobros in the company dashboard (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let operator: User;
  const contexts: BrowserContext[] = [];
  const pageProblems: string[] = [];
  const browserChecks: Array<Promise<void>> = [];
  const undocumented: string[] = [];

  /** Every answer the browser gets from the gateway is checked against GET /openapi.json (with the JSON request the page sent). */
  function checkAnswersOf(page: Page): void {
    page.on('response', (r) => {
      if (!r.url().startsWith(`${stack.gateway.url}/`)) return;
      browserChecks.push(
        (async () => {
          const u = new URL(r.url());
          const media = (r.headers()['content-type'] ?? '').split(';')[0]!.trim();
          const text = /json$|^text\//.test(media) ? await r.text().catch(() => null) : undefined;
          if (text === null) return;
          const sent = r.request().postData();
          const contentType = r.request().headers()['content-type'];
          await checkDocumented(stack.gateway.url, {
            method: r.request().method(),
            path: `${u.pathname}${u.search}`,
            status: r.status(),
            headers: new Headers(r.headers()),
            text,
            ...(sent && contentType ? { request: { contentType, text: sent } } : {}),
          });
        })().catch((err: Error) => {
          undocumented.push(err.message);
        }),
      );
    });
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `dashboard-cobros-${name}.png`), fullPage: true });
  const incoming = async (body: Record<string, unknown>) => {
    const res = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.status;
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // The transfer service too: the page opens on the approvals and the bulk payouts.
    stack = await startStack({
      transfers: true,
      deposits: true,
      gatewayEnv: { RATE_LIMIT_AUTHENTICATION: '100', RATE_LIMIT_FINANCIAL: '100', RATE_LIMIT_READS: '2000' },
    });
    browser = await launchChromium();
    co = await stack.provision('Cobros del Panel S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    const u = await stack.admin('POST', `/admin/companies/${co.id}/users`, {
      email: `cobros.${co.id.slice(0, 8)}@panel.example.co`,
      password: PASSWORD,
      role: 'OPERATOR',
    });
    expect(u.status).toBe(201);
    operator = { email: u.body.email, totpSecret: u.body.totpSecret };
  }, 120_000);
  afterEach(async () => {
    await Promise.all(browserChecks.splice(0));
    expect(undocumented.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await stack?.stop();
  });

  it('an operator sees the cobro and attaches an unmatched payment with a TOTP code', async () => {
    // The company's API client: an open cobro, and a payment to a customer's key that matches none (NO_MATCH).
    const key = await stack.http('POST', '/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cliente-panel', name: 'Tienda del Panel' } });
    expect(key.status).toBe(201);
    const created = await stack.http('POST', '/cobros', {
      token: co.writeKey,
      body: { reference: 'FAC-2026-0457', amountCents: 125_000_00, description: 'Factura 457', methods: ['BREB_QR', 'BREB_KEY'] },
    });
    expect(created.status).toBe(201);
    const cobro = created.body;
    expect(
      await incoming({ keyValue: key.body.key.value, amountCents: 125_000_00, payerName: 'Pedro Pérez', payerDocument: 'CC 11111111', payerBank: 'Nequi' }),
    ).toBe(202);
    const unmatched = await eventually(
      async () => (await stack.http('GET', '/cobros/unmatched-payments', { token: co.readKey })).body.items.find((p: any) => p.reason === 'NO_MATCH'),
      20_000,
      100,
    );

    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1100, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[14]/.test(m.text())) pageProblems.push(m.text());
    });
    page.on('pageerror', (e) => pageProblems.push(String(e)));
    checkAnswersOf(page);
    expect((await page.goto(`${stack.gateway.url}/dashboard`))?.status()).toBe(200);
    await page.getByLabel('Correo electrónico').fill(operator.email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('user-email').filter({ hasText: operator.email }).waitFor();

    // «Cobros»: the list, with the cobro's reference, status, amount, paid, expiry and methods.
    await page.getByRole('button', { name: 'Cobros', exact: true }).click();
    const row = page.locator(`[data-testid="cobro-row"][data-cobro-id="${cobro.id}"]`);
    await row.waitFor();
    const cell = async (testId: string) => (await row.getByTestId(testId).textContent())?.trim();
    expect(await cell('cobro-reference')).toBe('FAC-2026-0457');
    expect(await cell('cobro-status')).toBe('Abierto');
    expect(await cell('cobro-amount')).toBe('$ 125.000,00');
    expect(await cell('cobro-paid')).toBe('$ 0,00');
    expect(await cell('cobro-methods')).toBe('QR Bre-B, Llave Bre-B');
    expect(await cell('cobro-expires')).toMatch(/\d{4}/);

    // Its detail: the QR (a PNG read with the session), the key, no payments yet.
    await row.getByRole('button', { name: 'Ver el cobro FAC-2026-0457' }).click();
    await page.getByTestId('cobro-title').filter({ hasText: 'Cobro FAC-2026-0457' }).waitFor();
    expect(await page.getByTestId('cobro-key').textContent()).toBe(cobro.breb.keyValue);
    expect(await page.getByTestId('cobro-description').textContent()).toBe('Factura 457');
    // The QR is read with the session's token and shown as a data: URL (the CSP allows no other image source).
    // Polled with a function evaluated over CDP: a string predicate (waitForFunction) is eval'd in the page, which
    // the dashboard's CSP refuses whenever the image is not there at the first look (it failed so under load).
    const qr = page.getByTestId('cobro-qr');
    await eventually(
      () =>
        qr.evaluate((el) => {
          const img = el as unknown as { complete: boolean; naturalWidth: number; src: string };
          return img.complete && img.naturalWidth > 0 && img.src.startsWith('data:image/png');
        }),
      15_000,
      100,
    );
    expect(await page.getByTestId('cobro-no-payments').isVisible()).toBe(true);
    await shot(page, 'detail-open');
    await page.getByTestId('cobro-back').click();

    // «Pagos sin conciliar»: the payment, with why it is there.
    const payment = page.locator(`[data-testid="unmatched-row"][data-deposit-id="${unmatched.depositId}"]`);
    await payment.waitFor();
    expect((await payment.getByTestId('unmatched-amount').textContent())?.trim()).toBe('$ 125.000,00');
    expect((await payment.getByTestId('unmatched-reason').textContent())?.trim()).toBe('Ningún cobro coincide');
    expect(await payment.getByTestId('unmatched-payer').textContent()).toContain('Pedro Pérez');
    await payment.getByRole('button', { name: 'Conciliar' }).click();
    const form = page.getByTestId('attach-form');
    await form.waitFor();
    await form.getByLabel('Cobro abierto').selectOption(cobro.id);

    // A wrong code: the API's message, nothing attached.
    await form.getByLabel('Código TOTP').fill(wrongCode(operator));
    await form.getByRole('button', { name: 'Conciliar pago' }).click();
    await form.getByTestId('attach-result').filter({ hasText: ERRORS.INVALID_TOTP_CODE.message }).waitFor();
    await shot(page, 'attach-wrong-code');
    expect((await stack.http('GET', `/cobros/${cobro.id}`, { token: co.readKey })).body.payments).toEqual([]);

    // The right code: attached by hand, the cobro PAID, the payment gone from the list.
    await form.getByLabel('Código TOTP').fill(totp(operator));
    await form.getByRole('button', { name: 'Conciliar pago' }).click();
    const done = page.getByTestId('attach-result').filter({ hasText: 'conciliado' });
    await done.waitFor();
    expect((await done.textContent())?.trim()).toBe(
      'Pago de $ 125.000,00 conciliado con el cobro FAC-2026-0457. Estado del cobro: Pagado; pagado en total: $ 125.000,00.',
    );
    await payment.waitFor({ state: 'detached' });
    // The two lists reload side by side after the attach: the cobro list may answer after the unmatched one.
    await row.getByTestId('cobro-status').filter({ hasText: 'Pagado' }).waitFor();
    expect(await cell('cobro-status')).toBe('Pagado');
    await shot(page, 'attached');

    const after = (await stack.http('GET', `/cobros/${cobro.id}`, { token: co.readKey })).body;
    expect(after).toMatchObject({
      status: 'PAID',
      paidAmountCents: 125_000_00,
      payments: [{ depositId: unmatched.depositId, matchedBy: 'MANUAL', disposition: 'COUNTED' }],
    });

    // The detail shows the payment and how it was matched.
    await row.getByRole('button', { name: 'Ver el cobro FAC-2026-0457' }).click();
    const line = page.locator(`[data-testid="payment-row"][data-deposit-id="${unmatched.depositId}"]`);
    await line.waitFor();
    expect((await line.getByTestId('payment-matched-by').textContent())?.trim()).toBe('A mano');
    expect((await line.getByTestId('payment-disposition').textContent())?.trim()).toBe('Cuenta para el cobro');
    expect((await page.getByTestId('cobro-detail-status').textContent())?.trim()).toBe('Pagado');
    await shot(page, 'detail-paid');

    // «Devolver»: part of the payment back to its payer (docs/returns.md "From the dashboard"), with the
    // next step's TOTP code (a code works once, and the attach spent this step's).
    await line.getByRole('button', { name: 'Devolver el pago de $ 125.000,00' }).click();
    const giveBack = page.getByTestId('return-form');
    await giveBack.waitFor();
    await giveBack.getByTestId('return-left').filter({ hasText: 'Aún no tiene devoluciones: puedes devolver hasta $ 125.000,00.' }).waitFor();
    await giveBack.getByLabel('Monto a devolver (COP)').fill('30.000');
    await giveBack.getByLabel('Motivo').selectOption('OVERPAYMENT');
    await giveBack.getByLabel('Nota').fill('Pagó de más');
    await giveBack.getByLabel('Código TOTP').fill(totp(operator, 30_000));
    await giveBack.getByRole('button', { name: 'Devolver pago' }).click();
    const returned = page.getByTestId('return-result').filter({ hasText: 'Devolución de $ 30.000,00 al pagador' });
    await returned.waitFor();
    await shot(page, 'returned');
    const returns = await eventually(
      async () => {
        const items = (await stack.http('GET', `/deposits/${unmatched.depositId}/returns`, { token: co.readKey })).body.items;
        return items.length === 1 && items[0].status === 'RETURNED' ? items : null;
      },
      20_000,
      100,
    );
    expect(returns[0]).toMatchObject({ amountCents: '3000000', reason: 'OVERPAYMENT', description: 'Pagó de más', rail: 'BREB' });

    // The session's QR route, read outside the page (binary: checked by fetchDocumented).
    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('wallet.dashboard.session') ?? '{}').token as string);
    const png = await fetchDocumented(`${stack.gateway.url}/dashboard/cobros/${cobro.id}/qr.png`, { headers: { authorization: `Bearer ${token}` } });
    expect([png.status, png.headers.get('content-type')]).toEqual([200, 'image/png']);

    expect(pageProblems).toEqual([]);
    expect((await stack.invariants()).violations).toEqual([]);
  });
});
