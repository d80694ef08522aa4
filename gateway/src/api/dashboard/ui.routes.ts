import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AppError } from '@wallet/platform';
import { defineRoute, mediaTypes, type AnyRoute } from '../../http/route.js';
import { PAGE_CSP, PAGE_SECURITY_HEADERS } from '../../http/static-answer.js';

const here = dirname(fileURLToPath(import.meta.url));
/**
 * The page built by scripts/build-dashboard.mjs (sources in gateway/dashboard). From src/http/routes
 * (tests) and dist/http/routes (build) alike, the package root is three levels up.
 */
export const DASHBOARD_DIR = join(here, '..', '..', '..', 'dist', 'dashboard');

/** The only files served under /dashboard/assets: an allow-list, so no path ever reaches the file system. */
const ASSETS: Record<string, string> = {
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};
/** The operators' reconciliation page's files (under /admin, so in production only the admin listener serves them). */
const ADMIN_ASSETS: Record<string, string> = {
  'conciliaciones.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};

/** No inline script or style, nothing from another origin, no framing. */
export const DASHBOARD_CSP = PAGE_CSP;

const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': DASHBOARD_CSP,
  'Cache-Control': 'no-store',
  ...PAGE_SECURITY_HEADERS,
};

/**
 * The company dashboard's page and its bundled script and styles (the API it calls is
 * dashboard.routes.ts), and the operators' reconciliation page (it calls /admin/auth/*,
 * /admin/reconciliations and /admin/exceptions with the operator's session token).
 */
export function dashboardUiRoutes(dir = DASHBOARD_DIR): AnyRoute[] {
  const loaded = new Map<string, Buffer>();
  // Read once, on first use: a gateway started before the build still fails loudly (500, logged) rather than at boot.
  const file = (name: string): Buffer => {
    let body = loaded.get(name);
    if (!body) {
      try {
        body = readFileSync(join(dir, name));
      } catch (err) {
        // eslint-disable-next-line preserve-caught-error -- the message carries the cause; a `cause` would repeat it in the log
        throw new Error(`dashboard file ${name} missing in ${dir} (run the gateway build): ${(err as Error).message}`);
      }
      loaded.set(name, body);
    }
    return body;
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard',
      operationId: 'getDashboardPage',
      tags: ['Dashboard'],
      summary: 'The company dashboard (web page): sign in, sign or reject pending approvals, follow cobros and attach unmatched payments',
      auth: { kind: 'public' },
      responses: { 200: { description: 'HTML page (strict Content-Security-Policy, not cached).', contentType: 'text/html' } },
      handler: async () => ({ status: 200, body: file('index.html'), headers: PAGE_HEADERS }),
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/assets/{file}',
      operationId: 'getDashboardAsset',
      tags: ['Dashboard'],
      summary: 'Static files of the dashboard page (its script and styles)',
      auth: { kind: 'public' },
      params: z.object({ file: z.enum(Object.keys(ASSETS) as [string, ...string[]]) }),
      paramErrors: { file: 'ROUTE_NOT_FOUND' },
      responses: { 200: { description: 'The file.', contentType: mediaTypes(Object.values(ASSETS)) } },
      errors: ['ROUTE_NOT_FOUND'],
      handler: async ({ params }) => {
        const type = ASSETS[params.file];
        if (!type) throw new AppError('ROUTE_NOT_FOUND');
        return {
          status: 200,
          body: file(params.file),
          headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/conciliaciones',
      operationId: 'getReconciliationPage',
      tags: ['Admin'],
      summary: "The operators' reconciliation page (web page): runs, their breaks, resolutions, starting a run",
      description: 'The page holds no data: its script logs the operator in (POST /admin/auth/login) and calls the admin API with the session token.',
      auth: { kind: 'public' },
      audit: false,
      responses: { 200: { description: 'HTML page (strict Content-Security-Policy, not cached).', contentType: 'text/html' } },
      handler: async () => ({ status: 200, body: file('conciliaciones.html'), headers: PAGE_HEADERS }),
    }),
    defineRoute({
      method: 'GET',
      path: '/admin/conciliaciones/assets/{file}',
      operationId: 'getReconciliationPageAsset',
      tags: ['Admin'],
      summary: 'Static files of the reconciliation page (its script and styles)',
      auth: { kind: 'public' },
      audit: false,
      params: z.object({ file: z.enum(Object.keys(ADMIN_ASSETS) as [string, ...string[]]) }),
      paramErrors: { file: 'ROUTE_NOT_FOUND' },
      responses: { 200: { description: 'The file.', contentType: mediaTypes(Object.values(ADMIN_ASSETS)) } },
      errors: ['ROUTE_NOT_FOUND'],
      handler: async ({ params }) => {
        const type = ADMIN_ASSETS[params.file];
        if (!type) throw new AppError('ROUTE_NOT_FOUND');
        return {
          status: 200,
          body: file(params.file),
          headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' },
        };
      },
    }),
  ];
}
