import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { eventually } from '@wallet/platform/testing';
import { launchChromium } from '../support/browser.js';
import { startStack } from '../support/stack.js';
import { checkDocumented } from '../support/openapi-check.js';
import { SANDBOX_ACH_ACCOUNT } from '../support/fixtures.js';

const SHOTS = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'wallet-e2e-screenshots');
const PASSWORD = 'Clave-segura-2026!';
const dir = mkdtempSync(join(tmpdir(), 'dash-schedules-clock-'));
const clockFile = join(dir, 'now');
const setClock = (iso: string) => writeFileSync(clockFile, iso);

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * «Pagos programados» and «Alertas de saldo» in the company dashboard (issue 42), in a real
 * (headless) Chromium against the stack, the gateway's scheduler on a test clock: a VIEWER sees the
 * schedules in words, a run that moved money and one that failed with its reason, the projection's
 * warning in Spanish, and both wallets' balance alerts with the crossing. Every answer the page got
 * is one GET /openapi.json declares, and the page logs no error.
 */
describe('schedules and balance alerts in the company dashboard (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let viewerEmail: string;
  const contexts: BrowserContext[] = [];
  const pageProblems: string[] = [];
  const browserChecks: Array<Promise<void>> = [];
  const undocumented: string[] = [];
  const ids: Record<'move' | 'failing' | 'payroll', string> = {} as never;

  async function login(email: string): Promise<Page> {
    const context = await browser.newContext({ locale: 'es-CO', timezoneId: 'America/Bogota', viewport: { width: 1200, height: 1000 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[0-9]/.test(m.text())) pageProblems.push(m.text());
    });
    page.on('pageerror', (e) => pageProblems.push(String(e)));
    page.on('response', (r) => {
      if (!r.url().startsWith(`${stack.gateway.url}/`)) return;
      browserChecks.push(
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
    expect((await page.goto(`${stack.gateway.url}/dashboard`))?.status()).toBe(200);
    await page.getByLabel('Correo electrónico').fill(email);
    await page.getByLabel('Contraseña').fill(PASSWORD);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.getByTestId('user-email').filter({ hasText: email }).waitFor();
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage: true });
  const schedule = async (body: unknown) => {
    const r = await stack.http('POST', '/schedules', { token: co.writeKey, body, headers: { 'Idempotency-Key': randomUUID() } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    setClock('2026-12-14T12:00:00-05:00');
    stack = await startStack({
      transfers: true,
      gatewayEnv: {
        RATE_LIMIT_AUTHENTICATION: '100',
        RATE_LIMIT_FINANCIAL: '100',
        RATE_LIMIT_READS: '2000',
        SCHEDULER_TEST_CLOCK_FILE: clockFile,
        SCHEDULER_INTERVAL_MS: '100',
      },
    });
    browser = await launchChromium();
    co = await stack.provision('Programados del Panel S.A.S.');
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 2_000_000, reference: 'seed-BREB' })).status).toBe(201);
    viewerEmail = `vera.${co.id.slice(0, 8)}@panel.example.co`;
    expect((await stack.admin('POST', `/admin/companies/${co.id}/users`, { email: viewerEmail, password: PASSWORD, role: 'VIEWER' })).status).toBe(201);

    ids.move = await schedule({
      description: 'Fondeo ACH',
      recurrence: { kind: 'ONCE', executeAt: '2026-12-14T13:00:00-05:00' },
      businessDayRule: 'NONE',
      action: { kind: 'MOVE', from: 'BREB', to: 'ACH', amountCents: 100_000 },
    });
    ids.failing = await schedule({
      description: 'Devolución imposible',
      recurrence: { kind: 'ONCE', executeAt: '2026-12-14T13:00:00-05:00' },
      businessDayRule: 'NONE',
      action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 50_000_000 },
    });
    ids.payroll = await schedule({
      description: 'Pago semanal',
      recurrence: { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '08:00' },
      businessDayRule: 'NEXT',
      action: {
        kind: 'SEND',
        send: {
          amount: 1_300_000,
          description: 'Pago semanal',
          destination: {
            bankAccount: SANDBOX_ACH_ACCOUNT,
          },
        },
      },
    });
    setClock('2026-12-14T13:00:30-05:00');
    await eventually(
      async () => {
        for (const id of [ids.move, ids.failing]) {
          const runs = (await stack.http('GET', `/schedules/${id}/runs`, { token: co.readKey })).body.items as any[];
          if (runs.length !== 1 || runs[0].status === 'STARTING') return false;
        }
        return true;
      },
      30_000,
      100,
    );
    // BREB: 20.000 COP, under a low threshold of 50.000 COP: LOW at once, one crossing.
    expect(
      (await stack.http('PUT', '/wallets/BREB/alerts', { token: co.writeKey, body: { lowThresholdCents: 5_000_000, hysteresisCents: 100_000 } })).status,
    ).toBe(200);
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
    rmSync(dir, { recursive: true, force: true });
  });

  it('«Pagos programados»: the schedules in words, the projection’s warning, and a schedule’s runs', async () => {
    const page = await login(viewerEmail);
    await page.getByRole('button', { name: 'Pagos programados' }).click();
    const payroll = page.locator(`[data-testid="schedule-row"][data-id="${ids.payroll}"]`);
    await payroll.waitFor();
    expect((await payroll.getByTestId('schedule-status').textContent())?.trim()).toBe('Activo');
    expect(await payroll.getByTestId('schedule-recurrence').textContent()).toBe('Cada viernes a las 08:00; si no es día hábil, el siguiente día hábil');
    expect(await payroll.getByTestId('schedule-action').textContent()).toBe('Enviar $ 13.000,00 a Ana María Pérez Gómez (cuenta ••••8901, ACH)');
    expect(await payroll.getByTestId('schedule-next').textContent()).toMatch(/18\D+(12|dic)\D+2026.*8:00/);
    await page
      .getByTestId('projection-warning')
      .filter({ hasText: 'Los pagos programados del viernes 18 de diciembre necesitan 12.000 COP más en ACH.' })
      .waitFor();
    expect(await page.locator('[data-testid="projection-wallet"][data-rail="ACH"]').getByTestId('projection-shortfall').textContent()).toBe('$ 12.000,00');

    const move = page.locator(`[data-testid="schedule-row"][data-id="${ids.move}"]`);
    expect((await move.getByTestId('schedule-status').textContent())?.trim()).toBe('Terminado');
    expect(await move.getByTestId('schedule-action').textContent()).toBe('Mover $ 1.000,00 de Bre-B a ACH');
    await move.getByTestId('schedule-open').click();
    const made = page.getByTestId('schedule-run-row');
    await made.first().waitFor();
    expect((await made.getByTestId('schedule-run-status').textContent())?.trim()).toBe('Iniciada');
    expect(await made.getByTestId('schedule-run-made').textContent()).toMatch(/^Movimiento \S+/);

    await page.locator(`[data-testid="schedule-row"][data-id="${ids.failing}"]`).getByTestId('schedule-open').click();
    const failed = page.getByTestId('schedule-run-row').filter({ has: page.getByTestId('schedule-run-status').filter({ hasText: 'Fallida' }) });
    await failed.waitFor();
    expect(await failed.getByTestId('schedule-run-error').textContent()).toMatch(/[a-záéíóúñ]{4}/i);
    await shot(page, 'schedules');
  });

  it('«Alertas de saldo»: both wallets’ state and the crossing', async () => {
    const page = await login(viewerEmail);
    await page.getByRole('button', { name: 'Alertas de saldo' }).click();
    const breb = page.locator('[data-testid="alert-wallet"][data-rail="BREB"]');
    await breb.waitFor();
    expect((await breb.getByTestId('alert-state').textContent())?.trim()).toBe('Saldo bajo');
    expect(await breb.getByTestId('alert-low').textContent()).toBe('$ 50.000,00');
    expect((await page.locator('[data-testid="alert-wallet"][data-rail="ACH"]').getByTestId('alert-state').textContent())?.trim()).toBe('Sin alerta');
    await page.getByTestId('alert-event-kind').filter({ hasText: 'Bajó del umbral bajo' }).waitFor();
    await shot(page, 'balance-alerts');
  });
});
