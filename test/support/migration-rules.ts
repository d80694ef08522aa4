/**
 * The migration rules (docs/migrations.md), on the SQL a migration adds. A migration runs inside one
 * transaction with every other pending one (MikroORM `allOrNothing`), so a lock it takes on an
 * existing table is held until all of them commit. Each rule names a statement that takes a lock
 * writers wait on, for as long as the table is big:
 *
 * - `index-in-transaction`: CREATE INDEX (or a UNIQUE / PRIMARY KEY constraint building one) on a
 *   table that already exists: SHARE lock, no writes for the whole build. Build it online instead
 *   (CREATE INDEX CONCURRENTLY, outside the migrations: `onlineIndexes`), then ADD CONSTRAINT …
 *   USING INDEX if it must be a constraint.
 * - `volatile-default`: ADD COLUMN with a volatile default (now(), random(), gen_random_uuid(),
 *   clock_timestamp(), nextval()): rewrites the table under an ACCESS EXCLUSIVE lock. A constant
 *   default is metadata only (PostgreSQL ≥ 11).
 * - `column-rewrite`: ALTER COLUMN … TYPE: rewrites the table (and its indexes) under ACCESS EXCLUSIVE.
 * - `set-not-null`: ALTER COLUMN … SET NOT NULL: scans the table under ACCESS EXCLUSIVE. Add a CHECK
 *   (… is not null) NOT VALID, VALIDATE it, then SET NOT NULL (PostgreSQL skips the scan).
 * - `validated-constraint`: ADD CONSTRAINT CHECK / FOREIGN KEY without NOT VALID: scans the table
 *   under a lock that blocks writes. Add it NOT VALID, then VALIDATE CONSTRAINT (which lets writes go on).
 * - `backfill-in-transaction`: UPDATE / DELETE of an existing table, or INSERT … SELECT reading one:
 *   row locks (or one long read) for the whole migration. Backfill in batches outside the migration.
 * - `explicit-lock`: LOCK TABLE, VACUUM FULL, CLUSTER, REINDEX without CONCURRENTLY.
 * - `runs-its-own-statements`: an `up()` that runs statements itself (`this.execute`), a backfill
 *   inside the migration's transaction.
 *
 * Tables the same migration creates are exempt: nobody writes to them yet.
 */
export interface MigrationSql {
  service: string;
  name: string;
  sql: string[];
  runsItsOwnStatements: boolean;
}

const VOLATILE =
  /\b(now|clock_timestamp|statement_timestamp|transaction_timestamp|random|gen_random_uuid|uuid_generate_v4|nextval)\s*\(|\bcurrent_timestamp\b|\blocaltimestamp\b/;
const ident = String.raw`((?:"[^"]+"|[\w$]+)(?:\.(?:"[^"]+"|[\w$]+))?)`;

/** The schema-qualified name without quotes, lower case (an unqualified one as written). */
const norm = (name: string) => name.replace(/"/g, '').toLowerCase();

/** Strips comments and string/dollar-quoted literals (a rule must not match inside a function body). */
function code(sql: string): string {
  return sql
    .replace(/\$([\w]*)\$[\s\S]*?\$\1\$/g, ' $$body$$ ')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/** The rules this migration breaks: one line each, `service name: [rule] statement`. */
export function migrationViolations(m: MigrationSql): string[] {
  const out: string[] = [];
  const say = (rule: string, stmt: string) => out.push(`${m.service} ${m.name} [${rule}]: ${stmt.slice(0, 160)}`);
  if (m.runsItsOwnStatements) say('runs-its-own-statements', 'up() runs statements itself');
  const statements = m.sql.map(code);
  const created = new Set<string>();
  for (const s of statements) {
    for (const c of s.matchAll(new RegExp(String.raw`create (?:unlogged |temporary |temp )?table (?:if not exists )?${ident}`, 'g'))) created.add(norm(c[1]!));
  }
  const existing = (t: string) => !created.has(norm(t));

  for (const s of statements) {
    // a DO block or a function body: its text was blanked; only what runs at the top level counts
    const index = s.match(new RegExp(String.raw`^create (?:unique )?index (concurrently )?(?:if not exists )?(?:${ident} )?on (?:only )?${ident}`));
    if (index && !index[1] && existing(index[3]!)) say('index-in-transaction', s);

    const alter = s.match(new RegExp(String.raw`^alter table (?:if exists )?(?:only )?${ident} (.*)$`));
    if (alter && existing(alter[1]!)) {
      const body = alter[2]!;
      for (const clause of body.split(/,(?![^()]*\))/)) {
        const c = clause.trim();
        if (/^add (?:column )?(?!constraint)/.test(c) && /\bdefault\b/.test(c) && VOLATILE.test(c.slice(c.indexOf(' default ')))) say('volatile-default', s);
        if (/^alter (?:column )?\S+ (?:set data )?type\b/.test(c)) say('column-rewrite', s);
        if (/^alter (?:column )?\S+ set not null\b/.test(c)) say('set-not-null', s);
        if (/^add constraint \S+ (check|foreign key)\b/.test(c) && !/\bnot valid\b/.test(c)) say('validated-constraint', s);
        if (/^add (?:constraint \S+ )?(unique|primary key)\s*\(/.test(c)) say('index-in-transaction', s);
      }
    }

    const update = s.match(new RegExp(String.raw`^(?:with .*? )?(?:update (?:only )?${ident}|delete from (?:only )?${ident})`));
    if (update && existing((update[1] ?? update[2])!)) say('backfill-in-transaction', s);
    const insertSelect = s.match(new RegExp(String.raw`^insert into ${ident}[^;]*?\bselect\b(.*)$`));
    if (insertSelect) {
      const sources = [...insertSelect[2]!.matchAll(new RegExp(String.raw`\b(?:from|join) ${ident}`, 'g'))].map((x) => x[1]!);
      if (sources.some((t) => existing(t) && t.includes('.'))) say('backfill-in-transaction', s);
    }

    if (/^(lock table|lock \S|vacuum full|cluster\b)/.test(s) || (/^reindex\b/.test(s) && !/\bconcurrently\b/.test(s))) say('explicit-lock', s);
  }
  return out;
}
