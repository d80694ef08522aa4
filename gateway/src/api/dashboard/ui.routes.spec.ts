import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AppError } from '@wallet/platform';
import type { AnyRoute } from '../../http/route.js';
import { parseParams } from '../../http/validation.js';
import { DASHBOARD_CSP, dashboardUiRoutes } from './ui.routes.js';

const gatewayRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The real build (esbuild over gateway/dashboard) into a temp directory, served by the real route handlers. */
describe('dashboard page routes', () => {
  let dir: string;
  let page: AnyRoute;
  let asset: AnyRoute;
  const call = (route: AnyRoute, params?: unknown) => route.handler({ params, query: undefined, body: undefined } as never);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
    await promisify(execFile)(process.execPath, [join(gatewayRoot, 'scripts', 'build-dashboard.mjs'), '--out', dir]);
    [page, asset] = dashboardUiRoutes(dir) as [AnyRoute, AnyRoute];
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the page under the strict CSP, never cached', async () => {
    expect(page.path).toBe('/dashboard');
    expect(page.auth).toEqual({ kind: 'public' });
    const r = await call(page);
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': DASHBOARD_CSP,
    });
    expect(DASHBOARD_CSP).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
  });

  it('the built page has no inline script or style and loads only its own allow-listed assets', async () => {
    const html = String((await call(page)).body);
    expect(html).toContain('<html lang="es-CO">');
    expect(html).not.toMatch(/<script>|<script[^>]*>[^<]|<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/https?:\/\//);
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith('data:'));
    expect(refs.sort()).toEqual([
      expect.stringMatching(/^\/dashboard\/assets\/dashboard\.css\?v=[0-9a-f]{12}$/),
      expect.stringMatching(/^\/dashboard\/assets\/dashboard\.js\?v=[0-9a-f]{12}$/),
    ]);
    const js = readFileSync(join(dir, 'dashboard.js'), 'utf8');
    expect(js).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
  });

  it('serves the bundle and styles with their types, cacheable', async () => {
    const js = await call(asset, { file: 'dashboard.js' });
    expect(js.headers).toMatchObject({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
    });
    expect((js.body as Buffer).length).toBeGreaterThan(1000);
    const css = await call(asset, { file: 'dashboard.css' });
    expect(css.headers!['Content-Type']).toBe('text/css; charset=utf-8');
  });

  it('refuses any other file name as not found (no path reaches the file system)', () => {
    for (const file of ['../package.json', '..%2Fpackage.json', 'index.html', 'dashboard.js.map', 'DASHBOARD.JS', '']) {
      let err: unknown;
      try {
        parseParams(asset.params!, { file }, asset.paramErrors);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('ROUTE_NOT_FOUND');
    }
    expect(parseParams(asset.params!, { file: 'dashboard.css' }, asset.paramErrors)).toEqual({ file: 'dashboard.css' });
  });

  it("the operators' reconciliation page: under /admin, same CSP, only its own allow-listed assets, no HTML sinks in its script", async () => {
    const routes = dashboardUiRoutes(dir);
    const adminPage = routes.find((r) => r.path === '/admin/conciliaciones')!;
    const adminAsset = routes.find((r) => r.path === '/admin/conciliaciones/assets/{file}')!;
    expect(adminPage.auth).toEqual({ kind: 'public' });
    const r = await call(adminPage);
    expect(r.headers).toMatchObject({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Security-Policy': DASHBOARD_CSP });
    const html = String(r.body);
    expect(html).toContain('<html lang="es-CO">');
    expect(html).toContain('<title>Conciliaciones · Billetera de pagos</title>');
    expect(html).not.toMatch(/<script>|<script[^>]*>[^<]|<style|\sstyle=|\son[a-z]+=/i);
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith('data:'));
    expect(refs.sort()).toEqual([
      expect.stringMatching(/^\/admin\/conciliaciones\/assets\/conciliaciones\.js\?v=[0-9a-f]{12}$/),
      expect.stringMatching(/^\/admin\/conciliaciones\/assets\/dashboard\.css\?v=[0-9a-f]{12}$/),
    ]);
    const js = await call(adminAsset, { file: 'conciliaciones.js' });
    expect(js.headers!['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(String(js.body)).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    for (const file of ['dashboard.js', 'conciliaciones.html', '../package.json', '']) {
      expect(() => parseParams(adminAsset.params!, { file }, adminAsset.paramErrors)).toThrow(AppError);
    }
  });

  it('a gateway without the build answers 500 (logged), not an empty page', async () => {
    const [missingPage] = dashboardUiRoutes(join(dir, 'nope'));
    await expect(call(missingPage!)).rejects.toThrow(/missing .*run the gateway build/);
  });
});
