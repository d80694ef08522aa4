import { Database, createLogger } from '@wallet/platform';
import { createTestDatabase, type TestDatabase } from '@wallet/platform/testing';
import { SANDBOX_SCHEMA } from '../src/compose.js';
import { Migration0009SandboxBrebPartialReturns } from '../src/persistence/migrations/0009-sandbox-breb-partial-returns.js';
import { sandboxMigrations } from '../src/persistence/migrations/index.js';

/** Migration 0009 on a database that 0001-0008 left with returns on the payments (one per payment, migration 0007). */
describe('migration 0009-sandbox-breb-partial-returns on data of 0007', () => {
  let tdb: TestDatabase;
  afterAll(async () => {
    await tdb?.drop();
  });

  it("copies each payment's return into sandbox.breb_returns (id, amount, time kept); payments never returned have none", async () => {
    tdb = await createTestDatabase('sbx_mig');
    const log = createLogger('sandbox-mig-test', 'silent');
    const before = sandboxMigrations.slice(0, sandboxMigrations.indexOf(Migration0009SandboxBrebPartialReturns));
    const old = await Database.open({ url: tdb.url, schema: SANDBOX_SCHEMA, migrations: before, logger: log, poolMax: 2 });
    expect((await old.migrate()).at(-1)).toBe('0008-sandbox-breb-qr');
    await old.query(`insert into sandbox.breb_registrations (key_value, key_type, holder_name, holder_document, participant_callback_url, anchor_handle)
      values ('@mig', 'ALPHANUM', 'Tienda', null, 'http://127.0.0.1:9/cb', 'anh_000000000000000000000001')`);
    await old.query(`insert into sandbox.breb_incoming (provider_transfer_id, registration_id, key_value, amount_cents, payer_name, payer_document, payer_bank,
        received_at, return_id, returned_at)
      select x.id, r.id, '@mig', x.amount, 'Ana', 'CC 1', 'Nequi', '2025-03-14T15:00:00Z', x.ret, x.at::timestamptz
        from sandbox.breb_registrations r,
             (values ('brb_in_returned', 25000, 'dep_returned', '2025-03-15T16:00:00.123Z'), ('brb_in_kept', 9000, null, null)) as x(id, amount, ret, at)`);
    await old.close();

    const db = await Database.open({ url: tdb.url, schema: SANDBOX_SCHEMA, migrations: sandboxMigrations, logger: log, poolMax: 2 });
    try {
      expect((await db.migrate()).slice(0, 1)).toEqual(['0009-sandbox-breb-partial-returns']);
      expect(
        await db.query(`select return_id, provider_transfer_id, amount_cents::int as amount, to_char(returned_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') as at
          from sandbox.breb_returns order by return_id`),
      ).toEqual([{ return_id: 'dep_returned', provider_transfer_id: 'brb_in_returned', amount: 25000, at: '2025-03-15T16:00:00.123' }]);
    } finally {
      await db.close();
    }
  });
});
