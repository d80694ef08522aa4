// Starts the whole product locally: migrations, every process, readiness, a demo company with
// fresh API keys; Ctrl-C stops all of it. Logs go to .tools/logs/<process>.log.
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS, processes } from './processes.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const logDir = join(root, '.tools', 'logs');
const statePath = join(root, '.tools', 'demo.json');
mkdirSync(logDir, { recursive: true });

const env = {
  ...process.env,
  NODE_ENV: process.env.NODE_ENV ?? 'development',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  // Mail (pse-deposit's payment requests; the gateway's security notices and credentials)
  // goes to the sandbox's SMTP sink, read back at GET /sandbox/emails?to=…; the gateway also
  // publishes its outbox to the same NATS (NATS_URL, default nats://127.0.0.1:4222) as the services.
  SMTP_URL: process.env.SMTP_URL ?? `smtp://127.0.0.1:${process.env.SANDBOX_SMTP_PORT ?? 2525}`,
  // Every receipt's QR opens the gateway's public verification page.
  RECEIPT_VERIFY_BASE_URL: process.env.RECEIPT_VERIFY_BASE_URL ?? `http://127.0.0.1:${process.env.GATEWAY_PORT ?? 8080}/receipts/verify`,
};
const adminToken = env.ADMIN_TOKEN ?? 'dev-admin-token';
const gatewayUrl = `http://127.0.0.1:${env.GATEWAY_PORT ?? 8080}`;

// The development mesh PKI (a CA and one certificate per process, for mutual TLS between them),
// made once here rather than by every process at start-up; NODE_ENV=production refuses it.
const { ensureDevPki } = await import('@wallet/platform');
console.log(`[up] development mesh certificates in ${ensureDevPki()}`);

console.log('[up] applying migrations');
for (const p of processes) {
  const r = spawnSync(process.execPath, [p.migrate], { cwd: join(root, p.dir), env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    console.error(`[up] ${p.name}: migrations failed`);
    process.exit(1);
  }
}

const children = [];
let stopping = false;
function stopAll(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log('\n[up] stopping…');
  for (const c of [...children].reverse()) if (c.exitCode === null) c.kill('SIGTERM');
  const deadline = setTimeout(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    process.exit(code);
  }, 30_000);
  deadline.unref();
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r))))).then(() => {
    console.log('[up] stopped');
    process.exit(code);
  });
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

async function waitReady(url, name, child, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${name} exited (code ${child.exitCode}); see .tools/logs/${name}.log`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} not ready after ${timeoutMs / 1000} s; see .tools/logs/${name}.log`);
}

for (const p of processes) {
  const log = createWriteStream(join(logDir, `${p.name}.log`), { flags: 'a' });
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', '@wallet/platform/otel', p.main], {
    cwd: join(root, p.dir),
    env: { ...env, OTEL_SERVICE_NAME: p.name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[up] ${p.name} exited (${signal ?? code}); see .tools/logs/${p.name}.log`);
      stopAll(1);
    }
  });
  children.push(child);
  try {
    await waitReady(p.ready(), p.name, child);
  } catch (err) {
    console.error(`[up] ${err.message}`);
    stopAll(1);
    await new Promise(() => {});
  }
  console.log(`[up] ${p.name} ready`);
}

async function admin(method, path, body) {
  const r = await fetch(`${gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path} → ${r.status} ${text}`);
  return JSON.parse(text);
}

// Demo company: created once, then reused; new keys each run (the old demo keys are revoked).
let state = existsSync(statePath) ? JSON.parse(readFileSync(statePath, 'utf8')) : {};
try {
  let company;
  if (state.companyId) company = await admin('GET', `/admin/companies/${state.companyId}`).catch(() => undefined);
  if (!company) {
    company = await admin('POST', '/admin/companies', { name: 'Demo Pagos S.A.S.', nit: '900123456-7', taxRegime: 'COMMON', wallets: ['BREB', 'ACH'] });
    state = { companyId: company.id, keyIds: [] };
  }
  for (const keyId of state.keyIds ?? []) await admin('DELETE', `/admin/companies/${company.id}/api-keys/${keyId}`).catch(() => {});
  const write = await admin('POST', `/admin/companies/${company.id}/api-keys`, { scope: 'WRITE', label: 'demo-write' });
  const read = await admin('POST', `/admin/companies/${company.id}/api-keys`, { scope: 'READ', label: 'demo-read' });
  for (const rail of ['BREB', 'ACH']) {
    await admin('POST', `/admin/companies/${company.id}/wallets/${rail}/credit`, { amountCents: 1_000_000_000, reference: `demo-seed-${rail}` });
  }
  state.keyIds = [write.id, read.id];

  // A second demo company with multi-signature (threshold 2) and two dashboard users, so the
  // approval flow can be tried at /dashboard. Local development only: the passwords and TOTP
  // secrets are kept in .tools/demo.json (git-ignored) to be printed again on the next run.
  let multi;
  if (state.multiSig?.companyId) multi = await admin('GET', `/admin/companies/${state.multiSig.companyId}`).catch(() => undefined);
  if (!multi) {
    multi = await admin('POST', '/admin/companies', {
      name: 'Demo Firmas S.A.S.',
      nit: '900765432-1',
      taxRegime: 'COMMON',
      multiSigThreshold: 2,
      wallets: ['BREB', 'ACH'],
    });
    const users = [];
    for (const [n, role] of [
      ['ana', 'ADMIN'],
      ['luis', 'OPERATOR'],
    ]) {
      const password = `${n}-${randomBytes(9).toString('base64url')}`;
      const email = `${n}.${multi.id.slice(0, 8)}@demo-firmas.co`;
      const u = await admin('POST', `/admin/companies/${multi.id}/users`, { email, password, role });
      users.push({ email, password, role, totpSecret: u.totpSecret });
    }
    state.multiSig = { companyId: multi.id, users, keyIds: [] };
  }
  for (const keyId of state.multiSig.keyIds ?? []) await admin('DELETE', `/admin/companies/${multi.id}/api-keys/${keyId}`).catch(() => {});
  const multiWrite = await admin('POST', `/admin/companies/${multi.id}/api-keys`, { scope: 'WRITE', label: 'demo-write' });
  for (const rail of ['BREB', 'ACH']) {
    await admin('POST', `/admin/companies/${multi.id}/wallets/${rail}/credit`, { amountCents: 1_000_000_000, reference: `demo-seed-${rail}` });
  }
  state.multiSig.keyIds = [multiWrite.id];
  writeFileSync(statePath, JSON.stringify(state, null, 2));
  console.log(`
  Payments wallet is running.

  API (gateway)      ${gatewayUrl}
  API reference      ${gatewayUrl}/docs   (OpenAPI: ${gatewayUrl}/openapi.json)
  Admin token        ${adminToken}   (Authorization: Bearer …, on /admin/*)
  Demo company       ${company.name} (${company.id})
  WRITE API key      ${write.key}
  READ API key       ${read.key}
  Logs               .tools/logs/

  Multi-signature    ${multi.name} (threshold 2): WRITE API key ${multiWrite.key}
  Dashboard          ${gatewayUrl}/dashboard   (sign with the TOTP code of each user's secret)
${state.multiSig.users.map((u) => `    ${u.role.padEnd(8)} ${u.email}  password ${u.password}  TOTP secret ${u.totpSecret}`).join('\n')}

  Try:  curl -s ${gatewayUrl}/wallets/balance -H "Authorization: Bearer ${read.key}"

  Ctrl-C stops everything.
`);
} catch (err) {
  console.error(`[up] seeding the demo company failed: ${err.message}`);
  stopAll(1);
}
