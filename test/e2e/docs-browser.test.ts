import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { startStack } from '../support/stack.js';
import { checkDocumented } from '../support/openapi-check.js';

/** The dashboard's policy: every /docs answer carries the same. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type Stack = Awaited<ReturnType<typeof startStack>>;
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * The API reference in a real (headless) Chromium against the gateway: /docs lists the operations
 * (POST /transfers/send among them), opening one loads its details, a schema link lands on that
 * schema opened, and axe-core (WCAG 2 A/AA) finds no critical or serious violation on any of these
 * states; the pages run clean under the dashboard's CSP and every answer is the one documented.
 * How fast it paints is measured by `npm run docs:audit`, not here.
 */
describe('API reference (/docs) in Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const pageProblems: string[] = [];
  const browserChecks: Array<Promise<void>> = [];
  const undocumented: string[] = [];
  let lastHeaders: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack();
    browser = await launchChromium();
  }, 90_000);
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

  async function open(path: string): Promise<Page> {
    const context = await browser.newContext({ locale: 'es-CO', viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') pageProblems.push(m.text());
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
    const res = await page.goto(`${stack.gateway.url}${path}`);
    expect(res?.status()).toBe(200);
    lastHeaders = res!.headers();
    expect(res!.headers()).toMatchObject({
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      etag: expect.any(String),
    });
    return page;
  }

  /** axe-core's WCAG 2 A/AA violations that are critical or serious (evaluated by the debugger protocol, outside the page's CSP). */
  async function severeViolations(page: Page): Promise<string[]> {
    await page.evaluate(AXE_SOURCE);
    // A string: it runs in the page (axe, document), out of this file's Node types.
    const violations = await page.evaluate<AxeViolation[]>(
      "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }).then((r) => r.violations)",
    );
    return violations
      .filter((v) => v.impact === 'critical' || v.impact === 'serious')
      .map((v) => `[${v.impact}] ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  }

  it('lists every operation, POST /transfers/send among them, with no critical or serious axe violation', async () => {
    const page = await open('/docs');
    expect(lastHeaders['content-encoding']).toBe('br');
    expect(await page.locator('html').getAttribute('lang')).toBe('es');
    const send = page.locator('#op-sendTransfer summary');
    await send.waitFor({ state: 'visible' });
    expect((await send.textContent())?.replace(/\s+/g, ' ')).toMatch(/^POST \/transfers\/send /);
    await page.getByRole('navigation', { name: 'Operaciones' }).getByRole('link', { name: 'POST /transfers/send' }).waitFor();
    expect(await page.getByRole('main').count()).toBe(1);
    // Every operation of the served document has its line.
    const doc = (await stack.http('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => (op?.operationId ? [op.operationId] : [])));
    expect(ids.length).toBeGreaterThan(50);
    expect(await page.locator('article.op').count()).toBe(ids.length);
    expect(await severeViolations(page)).toEqual([]);
  });

  it('opening an operation loads its details (parameters, body, answers, a link to try it); axe still finds nothing severe', async () => {
    const page = await open('/docs');
    await page.locator('#op-sendTransfer summary').click();
    const body = page.locator('#op-sendTransfer .op-body');
    await body.getByRole('heading', { name: 'Respuestas' }).waitFor();
    await body.getByRole('heading', { name: /Cuerpo de la solicitud/ }).waitFor();
    expect(await body.getByRole('link', { name: 'SendTransferRequest' }).getAttribute('href')).toBe('/docs/schemas#schema-SendTransferRequest');
    expect(await body.getByRole('link', { name: /^Probar POST \/transfers\/send/ }).getAttribute('href')).toBe('/docs/explorer#/Transfers/sendTransfer');
    expect(await body.getByRole('rowheader', { name: 'Idempotency-Key' }).count()).toBeGreaterThan(0);
    expect(await severeViolations(page)).toEqual([]);

    // A schema link lands on the schemas page with that schema opened.
    await body.getByRole('link', { name: 'SendTransferRequest' }).click();
    await page.waitForURL(/\/docs\/schemas#schema-SendTransferRequest$/);
    const schema = page.locator('#schema-SendTransferRequest');
    // A send is exactly one of three forms (oneOf), each its own schema with its fields.
    await schema.getByText('Exactamente una de estas formas').waitFor();
    expect(await schema.locator('details').getAttribute('open')).not.toBeNull();
    expect(await schema.getByRole('link', { name: 'SendToBrebKeyRequest' }).count()).toBeGreaterThan(0);
    const variant = page.locator('#schema-SendToBrebKeyRequest');
    await variant.locator('summary').first().click();
    await variant.getByRole('columnheader', { name: 'Campo' }).first().waitFor();
    expect(await variant.getByRole('rowheader', { name: /^amount/ }).count()).toBe(1);
    expect(await severeViolations(page)).toEqual([]);
  });

  it("an operation's own page (no script needed) and the interactive console load under the same policy", async () => {
    const page = await open('/docs/operations/sendTransfer');
    await page.getByRole('heading', { level: 1, name: /POST \/transfers\/send/ }).waitFor();
    expect(await severeViolations(page)).toEqual([]);
    // The "Probar" link: Swagger UI (collapsed by tag; heavier, so no figure here) opens that operation under the same CSP.
    const explorer = await open('/docs/explorer#/Transfers/sendTransfer');
    await explorer.locator('#operations-Transfers-sendTransfer .opblock-summary-path[data-path="/transfers/send"]').waitFor({ timeout: 120_000 });
    await explorer.getByRole('button', { name: 'Try it out' }).waitFor({ timeout: 60_000 });
    expect(await explorer.getByRole('link', { name: /Referencia/ }).getAttribute('href')).toBe('/docs');
  }, 180_000);
});
