import { randomUUID } from 'node:crypto';
import { createLogger, Database } from '@wallet/platform';
import { createTestDatabase } from '@wallet/platform/testing';
import { transferEventsV1 } from '@wallet/proto';
import { TRANSFER_SCHEMA } from '../../src/compose.js';
import { TransferDataProtection } from '../../src/persistence/data-protection.js';
import { transferMigrations } from '../../src/persistence/migrations/index.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import {
  ACH_ACCOUNT,
  achSend,
  ctxOf,
  expectEvents,
  expectLedgerOk,
  newCompany,
  send,
  startHarness,
  streamEvents,
  testProtection,
  transferRow,
  waitForState,
  type Harness,
} from './harness.js';

const FULL = '40987654321';
const MASKED = '****4321';

describe('ACH account numbers sealed at rest', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  /** Every row of every table of the given schemas whose text holds `value`. */
  async function rowsHolding(schemas: string[], value: string): Promise<string[]> {
    const tables = await h.ledger.db.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables
        where table_schema in (${schemas.map((x) => `'${x}'`).join(', ')}) and table_type = 'BASE TABLE'`,
    );
    const hits: string[] = [];
    for (const { s, t } of tables) {
      const [r] = await h.ledger.db.query<{ n: string }>(`select count(*)::text as n from "${s}"."${t}" x where x::text like ?`, [`%${value}%`]);
      if (r && r.n !== '0') hits.push(`${s}.${t}: ${r.n}`);
    }
    return hits;
  }

  it('stores no clear digits, still dispatches the full number to the rail, and shows the masked form', async () => {
    const co = await newCompany(h, { ach: 1_000_000n });
    const res = await send(h, co, achSend(co, 50_000n, { reference: 'sealed-1' }, { accountNumber: FULL }));
    const id = res.transfer!.id;
    await waitForState(h, id, ['COMPLETED']);

    // The transfer row: no number in `destination`, a sealed value without the digits, the masked copy.
    const row = (await transferRow(h, id))!;
    expect(row.destination).not.toHaveProperty('accountNumber');
    expect(row.destination).toMatchObject({ kind: 'ACH', bankId: ACH_ACCOUNT.bankId, documentNumber: ACH_ACCOUNT.documentNumber });
    expect(row.account_number_masked).toBe(MASKED);
    expect(String(row.account_number_sealed)).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(testProtection.openAccount(String(row.account_number_sealed))).toBe(FULL);
    // Nothing the product keeps (transfer: rows, history, references, outbox; ledger: movements, postings) holds the number.
    expect(await rowsHolding(['transfer', 'ledger'], FULL)).toEqual([]);
    expect(await rowsHolding(['sandbox'], FULL)).toContain('sandbox.transfers: 1'); // the search finds what is there
    const [ref] = await h.ledger.db.query<{ request_hash: string }>(`select request_hash from transfer.send_references where reference = 'sealed-1'`);
    expect(ref!.request_hash).toMatch(/^hm1:[0-9a-f]{64}$/);

    // The rail (the sandbox, a provider outside the product) received the full number.
    const [railed] = await h.ledger.db.query<{ request: { accountNumber: string } }>(`select request from sandbox.transfers where transaction_id = ?`, [id]);
    expect(railed!.request.accountNumber).toBe(FULL);

    // Reads: the ledger's movement and every event carry the masked number only.
    const m = await h.ledgerClient.getMovement({ id }, ctxOf(co.id));
    expect(m.details?.bankAccountNumber).toBe(MASKED);
    await expectEvents(h, id, ['transfer.created', 'transfer.dispatched', 'transfer.completed']);
    const events = (await streamEvents(h)).filter((e) => e.event.transferId === id);
    expect(events.map((e) => e.event.bankAccountNumberMasked)).toEqual([MASKED, MASKED, MASKED]);
    expect(JSON.stringify(events.map((e) => transferEventsV1.TransferEvent.toJSON(e.event)))).not.toContain(FULL);

    // A replay of the same request is recognised through the fingerprint; another body is a conflict.
    expect(await send(h, co, achSend(co, 50_000n, { reference: 'sealed-1', requestHash: 'x' }, { accountNumber: FULL })).catch((e: Error) => e)).toMatchObject({
      code: 'REFERENCE_CONFLICT',
    });
  });

  it('a store with another key refuses to read the number, and says so without it', async () => {
    const co = await newCompany(h, { ach: 1_000_000n });
    const id = (await send(h, co, achSend(co, 20_000n, {}, { accountNumber: FULL }))).transfer!.id;
    await waitForState(h, id, ['COMPLETED']);
    const wrong = new SqlTransferStore(h.transfer!.db, new TransferDataProtection('another-transfer-data-key-of-32-characters'));
    const err = await wrong.get(id).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/TRANSFER_DATA_KEY/);
    expect(err?.message).not.toContain('4321');
    expect((await new SqlTransferStore(h.transfer!.db, testProtection).get(id))?.destination).toMatchObject({ kind: 'ACH', accountNumber: FULL });
  });

  it('the database refuses a clear number in `destination` from now on', async () => {
    const co = await newCompany(h, { ach: 1_000_000n });
    const id = (await send(h, co, achSend(co, 20_000n, {}, { accountNumber: FULL }))).transfer!.id;
    await waitForState(h, id, ['COMPLETED']);
    await expect(
      h.ledger.db.query(`update transfer.transfers set destination = destination || '{"accountNumber":"${FULL}"}'::jsonb where id = ?::uuid`, [id]),
    ).rejects.toThrow(/transfers_account_sealed_check/);
  });
});

describe('migration 0004 seals the rows already stored', () => {
  it('seals clear numbers, keeps them readable to the service, fingerprints request hashes, and opens them back on down', async () => {
    const tdb = await createTestDatabase('transfer_mig');
    const log = createLogger('migration-test', 'silent');
    const protection = new TransferDataProtection('a-transfer-data-key-of-at-least-32-chars');
    const all = transferMigrations(protection);
    try {
      // The schema as it was before 0004, with an ACH transfer, a BREB one and a reference claim stored in clear.
      const before = await Database.open({ url: tdb.url, schema: TRANSFER_SCHEMA, migrations: all.slice(0, 3), logger: log, poolMax: 2 });
      await before.migrate();
      const ach = randomUUID();
      const breb = randomUUID();
      const insert = `insert into transfer.transfers (id, company_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable,
          iva_amount, total_charged, target_name, target_document, counterparty_document, destination)
        values (?::uuid, 'co-1', ?, 'COMPLETED', 1000, 0, 0, 0, false, 0, 0, 'Ana', '52987654', '52987654', ?::jsonb)`;
      await before.query(insert, [ach, 'ACH', JSON.stringify({ ...ACH_ACCOUNT, kind: 'ACH', accountNumber: FULL })]);
      await before.query(insert, [
        breb,
        'BREB',
        JSON.stringify({ kind: 'BREB', keyType: 'PHONE', keyValue: '3001112233', anchorHandle: 'a', bankName: null, bankAccountType: null }),
      ]);
      await before.query(
        `insert into transfer.send_references (company_id, reference, request_hash, transfer_id) values ('co-1', 'ref-1', 'raw-sha256', ?::uuid)`,
        [ach],
      );
      await before.close();

      // Up to 0004 (the later migrations are not what this test is about; `down` then undoes 0004).
      const after = await Database.open({ url: tdb.url, schema: TRANSFER_SCHEMA, migrations: all.slice(0, 4), logger: log, poolMax: 2 });
      try {
        expect(await after.migrate()).toEqual(['0004-sealed-account-numbers']);
        const [row] = await after.query<Record<string, any>>('select * from transfer.transfers where id = ?::uuid', [ach]);
        expect(row!.destination).not.toHaveProperty('accountNumber');
        expect(row!.account_number_masked).toBe(MASKED);
        expect(JSON.stringify(row)).not.toContain(FULL);
        const [b] = await after.query<Record<string, any>>('select * from transfer.transfers where id = ?::uuid', [breb]);
        expect(b).toMatchObject({ account_number_sealed: null, account_number_masked: null, destination: { keyValue: '3001112233' } });

        const store = new SqlTransferStore(after, protection);
        expect((await store.get(ach))!.destination).toMatchObject({ kind: 'ACH', accountNumber: FULL, bankId: ACH_ACCOUNT.bankId });
        expect(await store.getReference('co-1', 'ref-1', 'raw-sha256')).toMatchObject({ sameRequest: true, transferId: ach });
        expect(await store.getReference('co-1', 'ref-1', 'other')).toMatchObject({ sameRequest: false });
        const [ref] = await after.query<{ request_hash: string }>(`select request_hash from transfer.send_references where reference = 'ref-1'`);
        expect(ref!.request_hash).toBe(protection.fingerprint('raw-sha256'));

        await after.orm.migrator.down();
        const [restored] = await after.query<Record<string, any>>('select * from transfer.transfers where id = ?::uuid', [ach]);
        expect(restored!.destination.accountNumber).toBe(FULL);
        expect(restored).not.toHaveProperty('account_number_sealed');
      } finally {
        await after.close();
      }
    } finally {
      await tdb.drop();
    }
  });
});
