// Migration rules (issue 44; docs/migrations.md): no migration of the product may hold a lock on a
// big table for more than a moment. A migration runs in one transaction with every other pending
// one, so anything it locks stays locked until all of them commit; on a table of 10,000,000 rows a
// plain index build, a column rewrite, a validated constraint or an in-place backfill holds writers
// off for minutes. Checked on the SQL each migration adds (from the built services, as they run).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { migrationViolations, type MigrationSql } from '../support/migration-rules.js';

const root = join(process.cwd(), '..'); // jest runs in test/

/** Each service's migrations, as its composition root lists them. */
const SERVICES: Array<{ service: string; dist: string; list: (m: Record<string, unknown>) => unknown[] }> = [
  { service: 'gateway', dist: 'gateway/dist/persistence/migrations/index.js', list: (m) => m.gatewayMigrations as unknown[] },
  { service: 'ledger', dist: 'services/ledger/dist/persistence/migrations/index.js', list: (m) => m.ledgerMigrations as unknown[] },
  // made with the service's data protection key: a stand-in, the SQL of the new ones does not use it
  {
    service: 'transfer',
    dist: 'services/transfer/dist/persistence/migrations/index.js',
    list: (m) => (m.transferMigrations as (p: unknown) => unknown[])({}),
  },
  { service: 'pse-deposit', dist: 'services/pse-deposit/dist/persistence/migrations/index.js', list: (m) => m.depositMigrations as unknown[] },
  { service: 'collect-key', dist: 'services/collect-key/dist/persistence/migrations/index.js', list: (m) => m.collectKeyMigrations as unknown[] },
  { service: 'receipt', dist: 'services/receipt/dist/persistence/migrations/index.js', list: (m) => m.receiptMigrations as unknown[] },
  { service: 'webhook', dist: 'services/webhook/dist/persistence/migrations/index.js', list: (m) => m.webhookMigrations as unknown[] },
  {
    service: 'reconciliation',
    dist: 'services/reconciliation/dist/persistence/migrations/index.js',
    list: (m) => m.reconciliationMigrations as unknown[],
  },
  { service: 'sandbox', dist: 'services/sandbox/dist/persistence/migrations/index.js', list: (m) => m.sandboxMigrations as unknown[] },
];

/**
 * The migrations written before these rules (issue 44), each service's last one: they ran long ago
 * on every installation and cannot change. What they would break is listed (and kept exact) below.
 */
const BEFORE_THE_RULES: Record<string, string> = {
  gateway: '0011',
  ledger: '0013',
  transfer: '0016',
  'pse-deposit': '0016',
  'collect-key': '0011',
  receipt: '0005',
  webhook: '0002',
  reconciliation: '0003',
  sandbox: '0011',
};

type MigrationCtor = new (driver: unknown, config: unknown) => { name?: string; up(): unknown; getQueries(): unknown[] };

/** Every migration's SQL, as `up()` adds it (a migration that runs statements itself has none to read). */
async function allMigrations(): Promise<MigrationSql[]> {
  const out: MigrationSql[] = [];
  for (const s of SERVICES) {
    const mod = (await import(pathToFileURL(join(root, s.dist)).href)) as Record<string, unknown>;
    for (const M of s.list(mod) as MigrationCtor[]) {
      const m = new M(null, null);
      const name = m.name ?? M.name;
      let runsItsOwnStatements = false;
      try {
        const r = m.up();
        if (r instanceof Promise) await r;
      } catch {
        // `this.execute` without a driver: a migration that runs (and reads) statements itself
        runsItsOwnStatements = true;
      }
      out.push({ service: s.service, name, sql: m.getQueries().map(String), runsItsOwnStatements });
    }
  }
  return out;
}

describe('migration rules', () => {
  let migrations: MigrationSql[];
  beforeAll(async () => {
    migrations = await allMigrations();
  });

  it('reads every service’s migrations', () => {
    for (const s of SERVICES) expect(migrations.filter((m) => m.service === s.service).length).toBeGreaterThan(1);
    expect(migrations.length).toBeGreaterThan(80);
  });

  it('no migration written since the rules holds a lock on an existing table beyond a moment', () => {
    const since = migrations.filter((m) => m.name.slice(0, 4) > BEFORE_THE_RULES[m.service]!);
    expect(since.map((m) => `${m.service} ${m.name}`)).toContain('ledger 0014-balance-checkpoints');
    expect(since.flatMap(migrationViolations)).toEqual([]);
  });

  it('the migrations before the rules: what each would break, known and kept exact', () => {
    const before = migrations.filter((m) => m.name.slice(0, 4) <= BEFORE_THE_RULES[m.service]!);
    const found = before.flatMap(migrationViolations).map((v) => v.replace(/: .*$/, ''));
    // One line per offence, the rule in brackets; docs/migrations.md says how each would be written today.
    expect(found).toMatchSnapshot();
  });
});

describe('the rule checker', () => {
  const check = (sql: string[], runsItsOwnStatements = false) => migrationViolations({ service: 'x', name: '9999-x', sql, runsItsOwnStatements });

  it('passes what takes no lock worth the name: new tables and their indexes, nullable columns, constant defaults, NOT VALID then VALIDATE', () => {
    expect(
      check([
        'create table if not exists ledger.things (id uuid primary key, n bigint not null default 0)',
        'create index if not exists things_n_idx on ledger.things (n)',
        "insert into ledger.things (id) values ('00000000-0000-0000-0000-000000000000')",
        'alter table ledger.postings add column if not exists note text',
        'alter table ledger.postings add column flag boolean not null default false',
        'alter table ledger.postings add constraint postings_note_len check (length(note) < 100) not valid',
        'alter table ledger.postings validate constraint postings_note_len',
        'alter table ledger.postings add constraint postings_x_uq unique using index postings_x_idx',
        'create or replace function ledger.f() returns int language sql as $$ select 1 $$',
        'drop index if exists ledger.old_idx',
      ]),
    ).toEqual([]);
  });

  it.each([
    ['create index postings_x_idx on ledger.postings (x)', 'index-in-transaction'],
    ['create unique index if not exists postings_x_uq on ledger.postings (x)', 'index-in-transaction'],
    ['alter table ledger.postings add column at timestamptz not null default now()', 'volatile-default'],
    ['alter table ledger.postings add column id2 uuid default gen_random_uuid()', 'volatile-default'],
    ['alter table ledger.postings alter column amount type numeric', 'column-rewrite'],
    ['alter table ledger.postings alter column note set not null', 'set-not-null'],
    ['alter table ledger.postings add constraint c check (amount > 0)', 'validated-constraint'],
    ['alter table ledger.entries add constraint fk foreign key (posting_id) references ledger.postings (id)', 'validated-constraint'],
    ['alter table ledger.postings add constraint u unique (idempotency_key)', 'index-in-transaction'],
    ["update ledger.postings set note = 'x'", 'backfill-in-transaction'],
    ['delete from ledger.postings where false', 'backfill-in-transaction'],
    ['insert into ledger.journal_queue (posting_id) select id from ledger.postings', 'backfill-in-transaction'],
    ['lock table ledger.postings in exclusive mode', 'explicit-lock'],
    ['vacuum full ledger.postings', 'explicit-lock'],
    ['reindex table ledger.postings', 'explicit-lock'],
  ])('flags %s', (sql, rule) => {
    const v = check([sql]);
    expect(v).toHaveLength(1);
    expect(v[0]).toContain(`[${rule}]`);
  });

  it('flags a migration that runs its own statements (a backfill in the migration’s transaction)', () => {
    expect(check([], true)).toEqual([expect.stringContaining('[runs-its-own-statements]')]);
  });
});
