// Conventions the code base keeps, checked on the source (CONVENTIONS.md "Ten habits").
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(process.cwd(), '..'); // jest runs in test/
const codeDirs = ['services', 'gateway/src'];

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === 'gen') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}
const files = codeDirs.flatMap((d) => walk(join(root, d))).map((f) => ({ path: relative(root, f), text: readFileSync(f, 'utf8') }));
const isTest = (p: string) => /\.(spec|test)\.ts$/.test(p) || p.includes('/test/') || p.endsWith('/testing.ts') || p.includes('/testing/');

describe('architecture rules', () => {
  it('finds the code it checks', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it('domain/ imports no transport, ORM, bus or I/O (habit 1)', () => {
    const forbidden = /from ['"](@mikro-orm|@grpc|@nats-io|pg|ioredis|koa|@koa|rate-limiter-flexible|node:(net|http|https|fs|child_process|dgram))/;
    const offenders = files.filter((f) => f.path.includes('/domain/') && forbidden.test(f.text)).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('only config.ts, main.ts and the CLI and test entry points read process.env (habit 9)', () => {
    const allowed = (p: string) => /(^|\/)(config|main)\.ts$/.test(p) || p.includes('/cli/') || p.includes('/telemetry/') || isTest(p);
    const offenders = files.filter((f) => !allowed(f.path) && /process\.env\b/.test(f.text)).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('no service touches another service\'s schema (habit 8)', () => {
    // The reconciliation reads the owning services' settled records over gRPC (ListSettlements /
    // FindSettlements), never their tables: its schema is its runs and breaks only.
    const schemas: Record<string, string> = { 'services/ledger/': 'ledger', 'services/transfer/': 'transfer', 'services/sandbox/': 'sandbox', 'services/reconciliation/': 'reconciliation', 'gateway/': 'gateway' };
    const offenders: string[] = [];
    for (const f of files.filter((x) => !isTest(x.path))) {
      const own = Object.entries(schemas).find(([prefix]) => f.path.startsWith(prefix))?.[1];
      if (!own) continue;
      for (const other of Object.values(schemas)) {
        if (other !== own && new RegExp(`["\\s(]${other}\\.[a-z_]+\\b`).test(f.text) && /\b(select|insert|update|delete)\b/i.test(f.text)) {
          offenders.push(`${f.path} → ${other}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('development secrets are written once, in platform dev-secrets.ts, where every process refuses them in production', () => {
    const registry = 'services/platform/src/config/dev-secrets.ts';
    // A `'dev-…'` literal, a `DEV_X = '…'` / `DEV_X: '…'` default, or the `not-for-production` marker.
    const devDefault = /['"`]dev-[A-Za-z0-9._-]*['"`]|\bDEV_[A-Z0-9_]+\s*[:=]\s*['"`]|not-for-production/;
    const offenders = files.filter((f) => !isTest(f.path) && f.path !== registry && devDefault.test(f.text)).map((f) => f.path);
    expect(offenders).toEqual([]);
    expect(files.find((f) => f.path === registry)?.text).toMatch(devDefault); // the check still sees the registry's own defaults
  });

  it('money is never a float: no parseFloat / toFixed on amounts in service code (habit 3)', () => {
    const offenders = files.filter((f) => !isTest(f.path) && /parseFloat\(|Number\.parseFloat|Math\.round\([^)]*(amount|cents|fee)/i.test(f.text)).map((f) => f.path);
    expect(offenders).toEqual([]);
  });
});
