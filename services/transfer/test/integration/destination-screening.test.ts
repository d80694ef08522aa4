import { randomUUID } from 'node:crypto';
import { createLogger, Database } from '@wallet/platform';
import { createTestDatabase } from '@wallet/platform/testing';
import { transferV1 } from '@wallet/proto';
import { TRANSFER_SCHEMA } from '../../src/compose.js';
import { TransferDataProtection } from '../../src/persistence/data-protection.js';
import { transferMigrations } from '../../src/persistence/migrations/index.js';
import { SqlBatchStore } from '../../src/persistence/batch.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import {
  ACH_ACCOUNT,
  Rail,
  achSend,
  brebSend,
  ctxOf,
  expectLedgerOk,
  failure,
  newCompany,
  send,
  startHarness,
  testProtection,
  transferRow,
  wallet,
  type CompanySetup,
  type Harness,
} from './harness.js';

/**
 * Screening on the destination account (docs/security.md): the AML list and the counterparty limits were keyed on the document the client
 * declares, so one digit added to it made a listed (or exhausted) bank account a new counterparty.
 * They are now keyed on the destination account too. Each test plays the attack through the real gRPC
 * service, ledger and sandbox rails, and sees it refused with the contract's code.
 */
describe('screening on the destination account (issue 36, finding 6)', () => {
  let h: Harness;
  beforeAll(async () => {
    // The races under test are the counterparty limits' claims. The parallel ACH payouts' account validations at the
    // rail are concurrent too: on a loaded 2-core machine one can take longer than the default 2 s provider timeout and
    // answer ACH_RAIL_UNAVAILABLE before any claim (as in concurrency.test.ts), so this file gives the rail that time.
    // The parallel payouts race the limits, not the sweeper: a send still RECEIVED after the harness's 1 s grace (a
    // loaded full run) would be given up by design and change the count (concurrency.test.ts, the same setting).
    h = await startHarness({ transferEnv: { PROVIDER_HTTP_TIMEOUT_MS: '15000', SWEEPER_GRACE_SECONDS: '60' } });
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  /** A fresh account number per test (AML entries are global to the test database). */
  const newAccount = () => `7${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`;
  const doc = (n: number) => String(1_000_000_000 + n);
  const to = (accountNumber: string, documentNumber: string, extra: Partial<typeof ACH_ACCOUNT> = {}) => ({ accountNumber, documentNumber, ...extra });
  const code = async (co: CompanySetup, req: transferV1.SendRequest) => (await failure(send(h, co, req))).code;
  const listAccount = (accountNumber: string, bankCode = '1007') =>
    h.client.addAmlEntry({ documentNumber: '', bankAccount: { bankCode, accountNumber }, reason: 'Cuenta reportada' }, ctxOf());

  it('a listed bank account is refused whatever document the payout declares (one digit added, another document, leading zeros, another account type)', async () => {
    const co = await newCompany(h, { ach: 1_000_000n });
    const account = newAccount();
    const entry = await listAccount(account);
    // The entry shows the bank and a masked number only.
    expect(entry).toMatchObject({
      kind: 'BANK_ACCOUNT',
      documentNumber: '',
      bankAccount: { bankCode: '1007', accountNumberMasked: `****${account.slice(-4)}` },
    });
    try {
      expect(await code(co, achSend(co, 1_000n, {}, to(account, '1020304050')))).toBe('RECIPIENT_BLACKLISTED');
      expect(await code(co, achSend(co, 1_000n, {}, to(account, '10203040501')))).toBe('RECIPIENT_BLACKLISTED'); // one digit added
      expect(await code(co, achSend(co, 1_000n, {}, to(account, '5566778899')))).toBe('RECIPIENT_BLACKLISTED');
      expect(await code(co, achSend(co, 1_000n, {}, to(`00${account}`, '5566778899')))).toBe('RECIPIENT_BLACKLISTED');
      expect(await code(co, achSend(co, 1_000n, {}, to(account, '5566778899', { accountTypeId: 21 })))).toBe('RECIPIENT_BLACKLISTED');
      // The same number at another bank is another account.
      const other = await send(h, co, achSend(co, 1_000n, {}, to(account, '5566778899', { bankId: 14, bankName: 'Banco Davivienda', bankAchCode: '1051' })));
      expect(other.transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
      // Listing it again answers the live entry.
      expect((await listAccount(`0${account}`)).id).toBe(entry.id);
      // Nothing was recorded for the refused payouts, and only the other bank's payout is held.
      const rows = await h.ledger.db.query<{ n: string }>('select count(*)::text as n from transfer.transfers where company_id = ?', [co.id]);
      expect(rows[0]!.n).toBe('1');
      expect(await wallet(h, co.id, Rail.ACH)).toMatchObject({ available: 999_000n });
    } finally {
      await h.client.removeAmlEntry({ id: entry.id }, ctxOf());
    }
    // Removed: the account may be paid again.
    expect((await send(h, co, achSend(co, 1_000n, {}, to(account, '10203040501')))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
  });

  it('the account entry keeps no full number: fingerprint, bank code and masked copy only; a listed document still refuses as before', async () => {
    const account = newAccount();
    const entry = await listAccount(account);
    try {
      const rows = await h.ledger.db.query<{ row: string }>('select row_to_json(e)::text as row from transfer.aml_entries e where id = ?::uuid', [entry.id]);
      expect(rows[0]!.row).not.toContain(account);
      expect(rows[0]!.row).toContain(testProtection.destinationFingerprint({ kind: 'ACH', bankAchCode: '1007', accountNumber: account }));
      expect(JSON.stringify(transferV1.AmlEntry.toJSON(entry))).not.toContain(account);
      // Without the in-memory copy (a store that does not watch the feed) the table answers the same.
      const fp = testProtection.destinationFingerprint({ kind: 'ACH', bankAchCode: '1007', accountNumber: `000${account}` });
      const other = testProtection.destinationFingerprint({ kind: 'ACH', bankAchCode: '1051', accountNumber: account });
      const store = new SqlTransferStore(h.transfer!.db, testProtection);
      expect(await store.amlHit(['1020304050', fp])).toBe(true);
      expect(await store.amlHit(['1020304050', other])).toBe(false);
      expect(await new SqlBatchStore(h.transfer!.db, testProtection).amlHits(['1020304050', fp, other])).toEqual(new Set([fp]));
    } finally {
      await h.client.removeAmlEntry({ id: entry.id }, ctxOf());
    }
    const bad = (b: Partial<transferV1.AmlBankAccountInput>, documentNumber = '') =>
      failure(h.client.addAmlEntry({ documentNumber, bankAccount: { bankCode: '1007', accountNumber: newAccount(), ...b }, reason: 'x' }, ctxOf()));
    expect((await bad({ bankCode: '17' })).code).toBe('INVALID_REQUEST');
    expect((await bad({ accountNumber: '12a45' })).code).toBe('INVALID_REQUEST');
    expect((await bad({ accountNumber: '0000' })).code).toBe('INVALID_REQUEST');
    expect((await bad({}, '1020304050')).code).toBe('INVALID_REQUEST'); // one of the two, not both
    const co = await newCompany(h, { ach: 100_000n });
    const byDoc = await h.client.addAmlEntry({ documentNumber: '6655443322', reason: 'Beneficiario reportado' }, ctxOf());
    expect(byDoc).toMatchObject({ kind: 'DOCUMENT', documentNumber: '6655443322' });
    try {
      expect(await code(co, achSend(co, 1_000n, {}, to(newAccount(), '6655443322')))).toBe('RECIPIENT_BLACKLISTED');
    } finally {
      await h.client.removeAmlEntry({ id: byDoc.id }, ctxOf());
    }
  });

  it('every payout records its destination fingerprint (ACH: bank + account, leading zeros aside; Bre-B: the resolved key)', async () => {
    const co = await newCompany(h, { ach: 100_000n, breb: 100_000n });
    const account = newAccount();
    const a = await send(h, co, achSend(co, 1_000n, {}, to(account, doc(1))));
    const b = await send(h, co, achSend(co, 1_000n, {}, to(`000${account}`, doc(2))));
    const fa = (await transferRow(h, a.transfer!.id))!.destination_fingerprint as string;
    expect(fa).toBe(testProtection.destinationFingerprint({ kind: 'ACH', bankAchCode: '1007', accountNumber: account }));
    expect((await transferRow(h, b.transfer!.id))!.destination_fingerprint).toBe(fa);
    const breb = await send(h, co, await brebSend(h, co, '3001239876', 1_000n));
    expect((await transferRow(h, breb.transfer!.id))!.destination_fingerprint).toBe(
      testProtection.destinationFingerprint({ kind: 'BREB', keyValue: '3001239876' }),
    );
  });

  it('counterparty limits sum by account too: the day limit reached with document A, the same account with document B (or A plus a digit) is refused', async () => {
    const co = await newCompany(h, { ach: 10_000_000n, daily: 100_000n });
    const x = newAccount();
    const y = newAccount();
    expect((await send(h, co, achSend(co, 100_000n, {}, to(x, doc(10))))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    expect(await code(co, achSend(co, 100n, {}, to(x, doc(11))))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    expect(await code(co, achSend(co, 100n, {}, to(x, `${doc(10)}1`)))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    expect(await code(co, achSend(co, 100n, {}, to(`0${x}`, doc(12), { accountTypeId: 21 })))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    // Another account to a fresh document has room…
    expect((await send(h, co, achSend(co, 50_000n, {}, to(y, doc(11))))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    // …but the document's own total still binds: A at another account is refused as before.
    expect(await code(co, achSend(co, 100n, {}, to(y, doc(10))))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    // Both totals must leave room: y has 50,000 used, document 11 has 50,000 used.
    expect(await code(co, achSend(co, 50_001n, {}, to(y, doc(13))))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    expect((await send(h, co, achSend(co, 50_000n, {}, to(y, doc(13))))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
  });

  it('the month limit sums by account as well', async () => {
    const co = await newCompany(h, { ach: 10_000_000n, monthly: 150_000n });
    const x = newAccount();
    await send(h, co, achSend(co, 100_000n, {}, to(x, doc(20))));
    await send(h, co, achSend(co, 50_000n, {}, to(x, doc(21))));
    expect(await code(co, achSend(co, 100n, {}, to(x, doc(22))))).toBe('COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED');
  });

  it('a transfer without a fingerprint (recorded before migration 0013) counts towards its document only', async () => {
    const co = await newCompany(h, { ach: 10_000_000n, daily: 100_000n });
    const x = newAccount();
    const old = await send(h, co, achSend(co, 100_000n, {}, to(x, doc(30))));
    await h.ledger.db.query('update transfer.transfers set destination_fingerprint = null where id = ?::uuid', [old.transfer!.id]);
    expect(await code(co, achSend(co, 100n, {}, to(newAccount(), doc(30))))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
    expect((await send(h, co, achSend(co, 100_000n, {}, to(x, doc(31))))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
    expect(await code(co, achSend(co, 100n, {}, to(x, doc(32))))).toBe('COUNTERPARTY_DAILY_LIMIT_EXCEEDED');
  });

  it('concurrency: 16 parallel payouts to one account, each with its own document, never pass the day limit in total', async () => {
    const co = await newCompany(h, { ach: 10_000_000n, daily: 50_000n });
    const x = newAccount();
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) => send(h, co, achSend(co, 5_000n, { reference: `par-${i}` }, to(i % 2 ? `0${x}` : x, doc(100 + i))))),
    );
    const codes = results.map((r) => (r.status === 'fulfilled' ? 'OK' : (r.reason as { code: string }).code));
    expect(codes.filter((c) => c === 'OK')).toHaveLength(10);
    expect(codes.filter((c) => c !== 'OK')).toEqual(Array(6).fill('COUNTERPARTY_DAILY_LIMIT_EXCEEDED'));
    const sum = await h.ledger.db.query<{ s: string }>(
      `select coalesce(sum(amount), 0)::text as s from transfer.transfers where company_id = ? and state <> 'REJECTED' and state <> 'FAILED'`,
      [co.id],
    );
    expect(sum[0]!.s).toBe('50000');
    expect(await wallet(h, co.id, Rail.ACH)).toMatchObject({ available: 10_000_000n - 50_000n });
  });

  it('concurrency: parallel payouts mixing two accounts and two documents (A→x, B→x, A→y, B→y) never pass either limit', async () => {
    const co = await newCompany(h, { ach: 10_000_000n, daily: 30_000n });
    const x = newAccount();
    const y = newAccount();
    const pairs: Array<[string, string]> = [
      [x, doc(200)],
      [x, doc(201)],
      [y, doc(200)],
      [y, doc(201)],
    ];
    const results = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) => send(h, co, achSend(co, 5_000n, { reference: `mix-${i}` }, to(...pairs[i % 4]!)))),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.code === 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED')).toBe(
      true,
    );
    const byKey = await h.ledger.db.query<{ k: string; s: string }>(
      `select k, sum(amount)::text as s from (
         select counterparty_document as k, amount from transfer.transfers where company_id = ? and state <> 'REJECTED'
         union all
         select destination_fingerprint, amount from transfer.transfers where company_id = ? and state <> 'REJECTED') u group by k`,
      [co.id, co.id],
    );
    for (const r of byKey) expect(BigInt(r.s)).toBeLessThanOrEqual(30_000n);
    // 4 keys, each at most 30,000, every payout on two of them: at most 12 of 5,000 (30,000 on x and y).
    expect(ok).toBeGreaterThanOrEqual(6);
    expect(ok).toBeLessThanOrEqual(12);
  });

  describe('bulk payouts screen through the same path', () => {
    const item = (seq: number, req: transferV1.SendRequest) => transferV1.BatchItemInput.fromPartial({ seq, line: 0, send: { ...req, requestHash: '' } });
    const create = (co: CompanySetup, items: transferV1.BatchItemInput[], mode = 'VALID_ONLY') =>
      h.client.createBatch(transferV1.CreateBatchRequest.fromPartial({ mode, source: 'JSON', requestHash: randomUUID(), items }), ctxOf(co.id));
    const lines = async (co: CompanySetup, id: string) =>
      (await h.client.listBatchItems({ batchId: id, limit: 1000 }, ctxOf(co.id))).items.map((i) => [i.status, i.errorCode ?? null]);

    it('a line to a listed account is invalid whatever its document; one listed between validation and execution is rejected at execution', async () => {
      const co = await newCompany(h, { ach: 1_000_000n });
      const x = newAccount();
      const y = newAccount();
      const entry = await listAccount(x);
      try {
        const r = await create(co, [item(1, achSend(co, 1_000n, {}, to(x, doc(300)))), item(2, achSend(co, 1_000n, {}, to(y, doc(301))))]);
        expect(r.results.map((i) => i.errorCode ?? 'ok')).toEqual(['RECIPIENT_BLACKLISTED', 'ok']);
        const later = await create(co, [item(1, achSend(co, 2_000n, {}, to(`0${y}`, doc(302)))), item(2, achSend(co, 3_000n, {}, to(newAccount(), doc(303))))]);
        expect(later.batch!.state).toBe('VALIDATED');
        const yEntry = await listAccount(y);
        try {
          await h.client.executeBatch({ batchId: later.batch!.id }, ctxOf(co.id));
          expect(await lines(co, later.batch!.id)).toEqual([
            ['REJECTED', 'RECIPIENT_BLACKLISTED'],
            [expect.any(String), null],
          ]);
        } finally {
          await h.client.removeAmlEntry({ id: yEntry.id }, ctxOf());
        }
      } finally {
        await h.client.removeAmlEntry({ id: entry.id }, ctxOf());
      }
    });

    it("limits: lines to one account under different documents are aggregated, and count with the account's single payouts", async () => {
      const co = await newCompany(h, { ach: 10_000_000n, daily: 100_000n });
      const x = newAccount();
      const r = await create(co, [
        item(1, achSend(co, 40_000n, {}, to(x, doc(400)))),
        item(2, achSend(co, 40_000n, {}, to(x, doc(401)))),
        item(3, achSend(co, 40_000n, {}, to(`0${x}`, doc(402)))),
      ]);
      expect(r.results.map((i) => i.errorCode ?? 'ok')).toEqual(['ok', 'ok', 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED']);
      // A single payout to the account after validation: execution decides again, under the locks.
      expect((await send(h, co, achSend(co, 30_000n, {}, to(x, doc(403))))).transfer!.status).toBe('MOVEMENT_STATUS_PENDING');
      await h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id));
      expect((await lines(co, r.batch!.id)).map(([, c]) => c)).toEqual([null, 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED', 'COUNTERPARTY_DAILY_LIMIT_EXCEEDED']);
      const sum = await h.ledger.db.query<{ s: string }>(`select sum(amount)::text as s from transfer.transfers where company_id = ? and state <> 'REJECTED'`, [
        co.id,
      ]);
      expect(sum[0]!.s).toBe('70000');
    });

    it('concurrency: a batch execution and single payouts to the same account under other documents never pass the limit together', async () => {
      const co = await newCompany(h, { ach: 10_000_000n, daily: 60_000n });
      const x = newAccount();
      const r = await create(co, [item(1, achSend(co, 20_000n, {}, to(x, doc(500)))), item(2, achSend(co, 20_000n, {}, to(x, doc(501))))]);
      expect(r.batch!.state).toBe('VALIDATED');
      await Promise.allSettled([
        h.client.executeBatch({ batchId: r.batch!.id }, ctxOf(co.id)),
        ...Array.from({ length: 4 }, (_, i) => send(h, co, achSend(co, 20_000n, { reference: `b-${i}` }, to(x, doc(510 + i))))),
      ]);
      const sum = await h.ledger.db.query<{ s: string }>(
        `select coalesce(sum(amount), 0)::text as s from transfer.transfers where company_id = ? and state <> 'REJECTED'`,
        [co.id],
      );
      expect(sum[0]!.s).toBe('60000');
    });
  });
});

describe('migration 0013 fingerprints the destinations of recent transfers', () => {
  it('fills ACH (from the sealed number) and Bre-B (from the stored key) transfers of the last 35 days, leaves older ones null, keeps document entries, and goes down', async () => {
    const tdb = await createTestDatabase('transfer_mig13');
    const log = createLogger('migration-test', 'silent');
    const protection = new TransferDataProtection('a-transfer-data-key-of-at-least-32-chars');
    // Up to 0013 (the later ones are not this test's): before it, then with it.
    const all = transferMigrations(protection).slice(0, 12);
    try {
      const before = await Database.open({ url: tdb.url, schema: TRANSFER_SCHEMA, migrations: all.slice(0, -1), logger: log, poolMax: 2 });
      await before.migrate();
      const [recentAch, oldAch, breb] = [randomUUID(), randomUUID(), randomUUID()];
      const insert = `insert into transfer.transfers (id, company_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable,
          iva_amount, total_charged, target_name, target_document, counterparty_document, destination, account_number_sealed, account_number_masked, created_at)
        values (?::uuid, 'co-1', ?, 'COMPLETED', 1000, 0, 0, 0, false, 0, 0, 'Ana', '52987654', '52987654', ?::jsonb, ?, ?, now() - (?::int * interval '1 day'))`;
      const { accountNumber: _n, ...achRest } = ACH_ACCOUNT;
      const sealed = protection.sealAccount('0040987654321');
      await before.query(insert, [recentAch, 'ACH', JSON.stringify({ ...achRest, kind: 'ACH' }), sealed.sealed, sealed.masked, 2]);
      await before.query(insert, [oldAch, 'ACH', JSON.stringify({ ...achRest, kind: 'ACH' }), sealed.sealed, sealed.masked, 60]);
      await before.query(insert, [
        breb,
        'BREB',
        JSON.stringify({ kind: 'BREB', keyType: 'PHONE', keyValue: '3001112233', anchorHandle: 'a', bankName: null, bankAccountType: null }),
        null,
        null,
        1,
      ]);
      await before.query(
        `insert into transfer.aml_entries (id, document_number, normalized_document, name, reason) values (?::uuid, '900123456', '900123456', null, 'x')`,
        [randomUUID()],
      );
      await before.close();

      const after = await Database.open({ url: tdb.url, schema: TRANSFER_SCHEMA, migrations: all, logger: log, poolMax: 2 });
      try {
        expect(await after.migrate()).toEqual(['0013-destination-screening']);
        const fp = async (id: string) =>
          (await after.query<{ f: string | null }>('select destination_fingerprint as f from transfer.transfers where id = ?::uuid', [id]))[0]!.f;
        expect(await fp(recentAch)).toBe(
          protection.destinationFingerprint({ kind: 'ACH', bankAchCode: ACH_ACCOUNT.bankAchCode, accountNumber: '40987654321' }),
        );
        expect(await fp(breb)).toBe(protection.destinationFingerprint({ kind: 'BREB', keyValue: '3001112233' }));
        expect(await fp(oldAch)).toBeNull();
        expect(await after.query('select kind, normalized_document from transfer.aml_entries')).toEqual([
          { kind: 'DOCUMENT', normalized_document: '900123456' },
        ]);
        await after.orm.migrator.down();
        const cols = await after.query<{ c: string }>(
          `select column_name as c from information_schema.columns where table_schema = 'transfer' and table_name = 'transfers' and column_name = 'destination_fingerprint'`,
        );
        expect(cols).toEqual([]);
      } finally {
        await after.close();
      }
    } finally {
      await tdb.drop();
    }
  });
});
