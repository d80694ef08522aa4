// npm run docs:audit: measures the API reference page (/docs) as a reader meets it, in Debian's headless
// Chromium against a real gateway on loopback (its own fresh database; Redis and NATS of the machine):
//   fcp        first contentful paint (PerformanceObserver 'paint'), from the start of navigation
//   usable     until the operation POST /transfers/send is on screen (visible), from the start of navigation
//   bytes      bytes transferred for the page and everything it loaded (Resource Timing transferSize), and decoded
//   axe        axe-core (WCAG 2 A and AA rules) after render, and again with that operation opened, by impact
// Each run is a cold load in a fresh browser profile; the figures are the median of DOCS_AUDIT_RUNS (5) runs.
// Prints a table and one JSON line (`docs-audit {...}`); exits 1 when axe finds a critical or serious violation.
//
//   DOCS_AUDIT_URL=http://127.0.0.1:8080   measure a gateway that is already running instead of starting one
//   DOCS_AUDIT_PATH=/docs                  the page to measure (e.g. /docs/explorer, the interactive console)
//   DOCS_AUDIT_RUNS=5                      cold loads to take the median of
//   CHROMIUM_PATH=/usr/bin/chromium
/* global window, document */ // the functions handed to page.evaluate and addInitScript run in the page
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { launchChromium } from '../support/chromium.mjs';

const require = createRequire(import.meta.url);
const PATH = process.env.DOCS_AUDIT_PATH ?? '/docs';
const RUNS = Number(process.env.DOCS_AUDIT_RUNS ?? 5);
const OPERATION = { method: 'POST', path: '/transfers/send' };
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const IMPACTS = ['critical', 'serious', 'moderate', 'minor'];

/** The gateway to measure: one given by URL, or a real one started here on a database of its own. */
async function gateway() {
  if (process.env.DOCS_AUDIT_URL) return { url: process.env.DOCS_AUDIT_URL.replace(/\/$/, ''), stop: async () => {} };
  const { createTestDatabase, testNamespace, deleteNamespaceStreams } = await import('@wallet/platform/testing');
  const { startGateway } = await import('@wallet/gateway/testing');
  const tdb = await createTestDatabase('docs');
  const namespace = testNamespace();
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  // The page needs no service behind the gateway: an unreachable ledger is fine (only /readyz would say so).
  const gw = await startGateway({ databaseUrl: tdb.url, ledgerAddress: '127.0.0.1:1', namespace, natsUrl, env: { LOG_LEVEL: 'error' } });
  return {
    url: gw.url,
    stop: async () => {
      await gw.stop();
      await deleteNamespaceStreams(natsUrl, namespace).catch(() => {});
      await tdb.drop();
    },
  };
}

/** Records first contentful paint as the page reports it (registered before any of the page's scripts run). */
function observePaint() {
  window.__fcp = undefined;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === 'first-contentful-paint') window.__fcp = e.startTime;
  }).observe({ type: 'paint', buffered: true });
}

/** The operation's line as a reader sees it, whatever the renderer: its path as the text of one element. */
const operationLocator = (page) => page.getByText(OPERATION.path, { exact: true }).first();

async function axe(page) {
  await page.evaluate(AXE_SOURCE); // evaluated by the debugger protocol: the page's CSP does not apply to it
  const result = await page.evaluate(() =>
    window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }),
  );
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    nodes: v.nodes.length,
    help: v.help,
    targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
  }));
}

async function measureOnce(browser, url, withAxe) {
  const context = await browser.newContext({ locale: 'es-CO', viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.addInitScript(observePaint);
  try {
    const res = await page.goto(url, { waitUntil: 'commit' });
    if (res?.status() !== 200) throw new Error(`GET ${url} answered ${res?.status()}`);
    const headers = res.headers();
    await operationLocator(page).waitFor({ state: 'visible', timeout: 60_000 });
    const usable = await page.evaluate(() => performance.now());
    await page.waitForLoadState('load');
    await page.waitForFunction(() => window.__fcp !== undefined, null, { timeout: 10_000 });
    const fcp = await page.evaluate(() => window.__fcp);
    await page.waitForLoadState('networkidle');
    const bytes = await page.evaluate(() => {
      const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
      return {
        transferred: entries.reduce((s, e) => s + e.transferSize, 0),
        decoded: entries.reduce((s, e) => s + e.decodedBodySize, 0),
        requests: entries.length,
      };
    });
    const phases = await page.evaluate(() => {
      const n = performance.getEntriesByType('navigation')[0];
      const css = performance.getEntriesByType('resource').find((e) => e.name.endsWith('.css'));
      return { ttfb: n.responseStart, html: n.responseEnd, css: css?.responseEnd, domInteractive: n.domInteractive, load: n.loadEventEnd };
    });
    const out = { fcp, usable, ...bytes, phases, headers, problems };
    if (withAxe) {
      out.axeRendered = await axe(page);
      // The operation opened (its parameters, body and answers shown), as a reader would.
      await operationLocator(page).click();
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(300);
      out.axeExpanded = await axe(page);
    }
    return out;
  } catch (err) {
    err.message += `\n  page problems: ${problems.join('\n    ') || '(none)'}`;
    throw err;
  } finally {
    await context.close();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const byImpact = (violations) => Object.fromEntries(IMPACTS.map((i) => [i, violations.filter((v) => v.impact === i).length]));

const gw = await gateway();
const browser = await launchChromium();
let failed;
try {
  const url = `${gw.url}${PATH}`;
  // One warm-up load (the gateway compresses each file once, on its first request), not counted.
  await measureOnce(browser, url, false);
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await measureOnce(browser, url, i === 0));
  const first = runs[0];
  const summary = {
    url,
    runs: RUNS,
    fcpMs: Math.round(median(runs.map((r) => r.fcp))),
    usableMs: Math.round(median(runs.map((r) => r.usable))),
    fcpMsEach: runs.map((r) => Math.round(r.fcp)),
    usableMsEach: runs.map((r) => Math.round(r.usable)),
    phasesMs: Object.fromEntries(Object.keys(first.phases).map((k) => [k, Math.round(median(runs.map((r) => r.phases[k] ?? 0)))])),
    transferredBytes: first.transferred,
    decodedBytes: first.decoded,
    requests: first.requests,
    axeRendered: byImpact(first.axeRendered),
    axeExpanded: byImpact(first.axeExpanded),
    headers: Object.fromEntries(
      ['content-security-policy', 'x-content-type-options', 'x-frame-options', 'referrer-policy', 'content-encoding', 'etag', 'cache-control'].map((h) => [
        h,
        first.headers[h],
      ]),
    ),
    pageProblems: [...new Set(runs.flatMap((r) => r.problems))],
  };
  const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`\n/docs audit: ${url} (median of ${RUNS} cold loads, headless Chromium)`);
  console.log(`  first contentful paint   ${summary.fcpMs} ms   (each: ${summary.fcpMsEach.join(', ')})`);
  console.log(`  ${OPERATION.method} ${OPERATION.path} visible   ${summary.usableMs} ms   (each: ${summary.usableMsEach.join(', ')})`);
  console.log(
    `  phases (median, ms)      ${Object.entries(summary.phasesMs)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  console.log(`  transferred              ${kb(summary.transferredBytes)} in ${summary.requests} requests (${kb(summary.decodedBytes)} decoded)`);
  for (const [when, list] of [
    ['after render', first.axeRendered],
    ['operation opened', first.axeExpanded],
  ]) {
    const c = byImpact(list);
    console.log(`  axe-core ${when.padEnd(17)}critical ${c.critical}, serious ${c.serious}, moderate ${c.moderate}, minor ${c.minor}`);
    for (const v of list) console.log(`    - [${v.impact}] ${v.id} (${v.nodes} nodes): ${v.help}  e.g. ${v.targets.join(' | ')}`);
  }
  for (const [h, v] of Object.entries(summary.headers)) console.log(`  ${h}: ${v ?? '(none)'}`);
  if (summary.pageProblems.length) console.log(`  console errors / CSP violations:\n    ${summary.pageProblems.join('\n    ')}`);
  console.log(`docs-audit ${JSON.stringify(summary)}`);
  failed = [...first.axeRendered, ...first.axeExpanded].some((v) => v.impact === 'critical' || v.impact === 'serious');
} finally {
  await browser.close();
  await gw.stop();
}
process.exit(failed ? 1 : 0);
