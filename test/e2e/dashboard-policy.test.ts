import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ERRORS } from '@wallet/platform';
import { launchChromium } from '../support/browser.js';
import { startStack } from '../support/stack.js';
import { checkDocumented } from '../support/openapi-check.js';

const SHOTS = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'wallet-e2e-screenshots');
const PASSWORD = 'Clave-segura-2026!';

type Stack = Awaited<ReturnType<typeof startStack>>;
interface User {
  email: string;
  totpSecret: string;
}

const totp = (u: User, offsetMs = 0) =>
  new TOTP({ secret: Secret.fromBase32(u.totpSecret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + offsetMs });
function wrongCode(u: User): string {
  const near = new Set([-90_000, -60_000, -30_000, 0, 30_000, 60_000, 90_000].map((o) => totp(u, o)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!near.has(c)) return c;
  }
}

/**
 * «Política de aprobación» and «Contrapartes» in the company dashboard, in a real (headless)
 * Chromium against the whole stack: an ADMIN proposes a policy as JSON (a wrong TOTP code shows the
 * API's message and proposes nothing), a second ADMIN signs it in another browser, and the page shows
 * it approved with its effective date, then in force; a VIEWER reads it without the forms; the
 * company's counterparties are listed with their verification.
 */
describe('the approval policy in the company dashboard (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const users: Record<'ana' | 'luis' | 'vera', User> = {} as never;
  const contexts: BrowserContext[] = [];
  const pageProblems: string[] = [];
  const browserChecks: Array<Promise<void>> = [];
  const undocumented: string[] = [];

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

  async function login(u: User): Promise<Page> {
    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1100, height: 1000 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[0-9]/.test(m.text())) pageProblems.push(m.text());
    });
    page.on('pageerror', (e) => pageProblems.push(String(e)));
    checkAnswersOf(page);
    expect((await page.goto(`${stack.gateway.url}/dashboard`))?.status()).toBe(200);
    await page.getByLabel('Correo electrónico').fill(u.email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('user-email').filter({ hasText: u.email }).waitFor();
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `dashboard-policy-${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    stack = await startStack({
      transfers: true,
      transferEnv: { POLICY_CHANGE_DELAY_SECONDS: '2' },
      gatewayEnv: { RATE_LIMIT_AUTHENTICATION: '100', RATE_LIMIT_FINANCIAL: '100', RATE_LIMIT_READS: '2000' },
    });
    browser = await launchChromium();
    co = await stack.provision('Política del Panel S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    for (const [name, role] of [
      ['ana', 'ADMIN'],
      ['luis', 'ADMIN'],
      ['vera', 'VIEWER'],
    ] as const) {
      const u = await stack.admin('POST', `/admin/companies/${co.id}/users`, {
        email: `${name}.${co.id.slice(0, 8)}@panel.example.co`,
        password: PASSWORD,
        role,
      });
      expect(u.status).toBe(201);
      users[name] = { email: u.body.email, totpSecret: u.body.totpSecret };
    }
  }, 120_000);
  afterEach(async () => {
    await Promise.all(browserChecks.splice(0));
    expect(undocumented.splice(0)).toEqual([]);
    expect(pageProblems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await stack?.stop();
  });

  it('an ADMIN proposes with TOTP, another signs: approved with its date, then in force; a VIEWER only reads', async () => {
    const policy = {
      rules: [{ id: 'grandes', when: { amountAtLeastCents: 5_000_000_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 2 } }],
      otherwise: { action: 'ALLOW' },
    };
    const ana = await login(users.ana);
    await ana.getByRole('button', { name: 'Política de aprobación' }).click();
    await ana.getByTestId('policy-none').waitFor();
    const form = ana.getByTestId('policy-propose');
    await form.getByLabel('Política (JSON)').fill(JSON.stringify(policy));
    await form.getByLabel('Nota (opcional)').fill('Pagos grandes con dos firmas');

    // Not JSON: refused in the page; a wrong code: the API's message, nothing proposed.
    await form.getByLabel('Política (JSON)').fill('{ "rules": [');
    await form.getByLabel('Código TOTP').fill(totp(users.ana));
    await form.getByRole('button', { name: 'Proponer' }).click();
    await form.getByTestId('policy-propose-message').filter({ hasText: 'La política no es un JSON válido.' }).waitFor();
    await form.getByLabel('Política (JSON)').fill(JSON.stringify(policy));
    await form.getByLabel('Código TOTP').fill(wrongCode(users.ana));
    await form.getByRole('button', { name: 'Proponer' }).click();
    await form.getByTestId('policy-propose-message').filter({ hasText: ERRORS.INVALID_TOTP_CODE.message }).waitFor();
    expect((await stack.http('GET', '/approval-policy', { token: co.readKey })).body.proposed).toBeNull();

    await form.getByLabel('Código TOTP').fill(totp(users.ana));
    await form.getByRole('button', { name: 'Proponer' }).click();
    await ana.getByTestId('policy-message').filter({ hasText: 'Versión 1 propuesta: falta 1 firma.' }).waitFor();
    const proposed = ana.getByTestId('policy-proposed');
    expect((await proposed.getByTestId('policy-proposed-signatures').textContent())?.trim()).toBe('1 de 2');
    expect(await proposed.getByTestId('policy-sign').isDisabled()).toBe(true); // the proposer signed already
    expect(JSON.parse((await proposed.getByTestId('policy-proposed-json').textContent())!)).toEqual(policy);
    await shot(ana, 'proposed');

    // A VIEWER sees the proposal, without the forms.
    const vera = await login(users.vera);
    await vera.getByRole('button', { name: 'Política de aprobación' }).click();
    await vera.getByTestId('policy-proposed').waitFor();
    expect(await vera.getByTestId('policy-sign').count()).toBe(0);
    expect(await vera.getByTestId('policy-propose').count()).toBe(0);

    // The second ADMIN signs in their own browser: approved, with the date it comes into force.
    const luis = await login(users.luis);
    await luis.getByRole('button', { name: 'Política de aprobación' }).click();
    const box = luis.getByTestId('policy-proposed');
    await box.getByLabel('Código TOTP').fill(totp(users.luis));
    await box.getByRole('button', { name: 'Firmar la propuesta' }).click();
    await luis.getByTestId('policy-message').filter({ hasText: 'Política aprobada: entra en vigor el' }).waitFor();
    const state = (await stack.http('GET', '/approval-policy', { token: co.readKey })).body;
    const version = state.inForce ?? state.scheduled[0];
    expect(version).toMatchObject({ version: 1, status: 'APPROVED', signatures: [{ email: users.ana.email }, { email: users.luis.email }] });

    // After the change delay a reload shows it in force (reloaded until then, with a deadline).
    for (const deadline = Date.now() + 15_000; ;) {
      await luis.getByTestId('policy-reload').click();
      try {
        await luis.getByTestId('policy-in-force').waitFor({ timeout: 500 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
    }
    expect((await luis.getByTestId('policy-in-force-signatures').textContent())?.trim()).toBe('2 de 2');
    expect(await luis.getByTestId('policy-in-force-effective').textContent()).toMatch(/\d{4}/);
    await shot(luis, 'in-force');
  });

  it('«Contrapartes» lists the company’s counterparties with their verification', async () => {
    const k = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3001112233' } });
    const c = await stack.http('POST', '/counterparties', {
      token: co.writeKey,
      body: {
        name: 'Empleada de nómina',
        brebKey: { keyType: 'PHONE', keyValue: '3001112233' },
        documentTypeId: 1,
        documentNumber: k.body.recipient.idValue,
        holderName: k.body.recipient.fullName,
        tags: ['employee'],
      },
    });
    expect(c.status).toBe(201);
    const vera = await login(users.vera);
    await vera.getByRole('button', { name: 'Contrapartes' }).click();
    const row = vera.locator(`[data-testid="counterparty-row"][data-id="${c.body.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('Empleada de nómina');
    expect(await row.textContent()).toContain('employee');
    expect((await row.getByTestId('counterparty-status').textContent())?.trim()).toBe('Verificada');
    await shot(vera, 'counterparties');
  });
});
