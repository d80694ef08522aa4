import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Database, createLogger } from '@wallet/platform';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';

type Migrations = Parameters<typeof Database.open>[0]['migrations'];

/**
 * An owner's migrations, from its testing entry (its package's dist). Not declared dependencies: pse-deposit's and
 * collect-key's tests depend on this package, so declaring them would make a build cycle; the workspace links every
 * package, and the whole build builds them first.
 */
async function migrationsOf(pkg: string, name: string): Promise<Migrations> {
  return ((await import(pkg)) as Record<string, Migrations>)[name]!;
}

export const alnum = (n: number) => Array.from(randomBytes(n), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

export interface OwnerSchemas {
  tdb: TestDatabase;
  /** A plain connection to the test database: the checker's (it sets the read-only roles itself) and the test's writes. */
  client: pg.Client;
  close(): Promise<void>;
}

/**
 * A test database with the schemas of pse-deposit and collect-key made by their own migrations
 * (Database.migrate(), which also creates their read-only roles), for the `cobros` checks.
 */
export async function cobroOwnerSchemas(prefix: string): Promise<OwnerSchemas> {
  const tdb = await createTestDatabase(prefix);
  for (const [schema, pkg, name] of [
    ['pse_deposit', '@wallet/pse-deposit/testing', 'depositMigrations'],
    ['collect_key', '@wallet/collect-key/testing', 'collectKeyMigrations'],
  ] as const) {
    const db = await Database.open({
      url: tdb.url,
      schema,
      migrations: await migrationsOf(pkg, name),
      logger: createLogger('invariants-test', 'silent'),
      poolMax: 1,
    });
    try {
      await db.migrate();
    } finally {
      await db.close();
    }
  }
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  return {
    tdb,
    client,
    close: async () => {
      await client.end();
      await tdb.drop();
    },
  };
}
