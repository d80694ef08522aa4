// Conventions the code base keeps, checked on the source (CONVENTIONS.md "Ten habits"); no server needed.
// The import rules (layers, and domain/ importing no transport, ORM, bus or I/O: habit 1) are
// ESLint's (eslint.config.js, `npm run lint`); these are the rules an import graph cannot see.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

  it('only config.ts, main.ts and the CLI and test entry points read process.env (habit 9)', () => {
    const allowed = (p: string) => /(^|\/)(config|main)\.ts$/.test(p) || p.includes('/cli/') || p.includes('/telemetry/') || isTest(p);
    const offenders = files.filter((f) => !allowed(f.path) && /process\.env\b/.test(f.text)).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  // Every process that owns a schema, and the schema's name (its migrations are in src/persistence/migrations).
  const schemas: Record<string, string> = {
    'gateway/': 'gateway',
    'services/ledger/': 'ledger',
    'services/transfer/': 'transfer',
    'services/sandbox/': 'sandbox',
    'services/reconciliation/': 'reconciliation',
    'services/pse-deposit/': 'pse_deposit',
    'services/collect-key/': 'collect_key',
    'services/receipt/': 'receipt',
    'services/webhook/': 'webhook',
  };

  it('knows every schema: each process with migrations is listed, under the schema name its code opens', () => {
    const withMigrations = ['gateway', ...readdirSync(join(root, 'services')).map((s) => `services/${s}`)]
      .filter((d) => existsSync(join(root, d, 'src/persistence/migrations')))
      .map((d) => `${d}/`);
    expect(withMigrations.sort()).toEqual(Object.keys(schemas).sort());
    for (const [prefix, schema] of Object.entries(schemas)) {
      // `schema: 'x'` where the database is opened, or the `X_SCHEMA = 'x'` constant it is opened with.
      const opens = files.some((f) => f.path.startsWith(prefix) && !isTest(f.path) && new RegExp(`(schema: |_SCHEMA = )'${schema}'`).test(f.text));
      expect({ prefix, schema, opens }).toEqual({ prefix, schema, opens: true });
    }
  });

  /** The schemas among `names` whose tables a file's SQL names (`from ledger.wallets`, `insert into transfer.x`) or opens (`schema: 'x'`); comment lines skipped. */
  const schemasTouched = (text: string, names: string[]): string[] => {
    const code = text
      .split('\n')
      .filter((l) => !/^\s*(\/\/|\/?\*)/.test(l))
      .join('\n');
    return names.filter(
      (n) =>
        new RegExp(`\\b(from|join|into|update|table|references|truncate|on)\\s+"?${n}"?\\."?[a-z_]+`, 'i').test(code) ||
        new RegExp(`schema: '${n}'`).test(code),
    );
  };

  it("no service touches another service's schema (habit 8)", () => {
    // A process reads another's records over gRPC (e.g. the reconciliation's ListSettlements /
    // FindSettlements), never its tables: checked in the code of every process that owns a schema.
    const offenders: string[] = [];
    for (const f of files.filter((x) => !isTest(x.path))) {
      const own = Object.entries(schemas).find(([prefix]) => f.path.startsWith(prefix))?.[1];
      if (!own) continue;
      for (const other of schemasTouched(
        f.text,
        Object.values(schemas).filter((n) => n !== own),
      ))
        offenders.push(`${f.path} → ${other}`);
    }
    expect(offenders).toEqual([]);
  });

  it('the schema rule sees cross-schema SQL where it is meant to be: the invariants checker', () => {
    // services/invariants owns no schema: it is the auditor that reads every schema through each
    // service's read-only role. Its queries show that the rule above would see such SQL.
    const invariants = files.filter((f) => f.path.startsWith('services/invariants/src/') && !isTest(f.path));
    const seen = new Set(invariants.flatMap((f) => schemasTouched(f.text, Object.values(schemas))));
    expect([...seen]).toEqual(expect.arrayContaining(['ledger', 'transfer', 'pse_deposit', 'reconciliation']));
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
    const offenders = files
      .filter((f) => !isTest(f.path) && /parseFloat\(|Number\.parseFloat|Math\.round\([^)]*(amount|cents|fee)/i.test(f.text))
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });
});
