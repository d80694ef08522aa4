// Transfers, receipts and a reconciliation day at scale (issue 44; docs/benchmarks.md "Transfers, receipts and a
// reconciliation day at scale"): in a scratch database, the transfer and receipt schemas as their migrations leave
// them, filled through bulk statements that keep every constraint of the tables:
//   - SCALE_TRANSFERS transfers (default 2,000,000) over the last 365 days for SCALE_COMPANIES companies (default
//     100,000), SCALE_LARGE_TRANSFERS of them (default 200,000) on one large company; BREB 70%, ACH 30% (each ACH
//     one with its sealed account number, as the check asks). Final and live states: COMPLETED 85%, FAILED 9%
//     (two thirds taken by the rail, with a provider id), REJECTED 5%, and of those younger than 20 minutes half
//     still live (RECEIVED, RESERVED, DISPATCHED, with their next attempt). No state history: none of the reads
//     below reads it.
//   - SCALE_BATCHES batches (default 40) of 5,000 executed items each, the large company's, over its transfers.
//   - SCALE_RECON_LINES ACH transfers (default 1,000,000) settled on one Bogotá day (yesterday; the year's
//     transfers avoid it; SCALE_RECON_DAY=<yyyy-mm-dd> names it, e.g. to measure a kept database again), the
//     reconciliation's day, and the provider's report of it.
//   - the receipt service's read model (receipt.transactions) for every one of them, as its projector leaves it,
//     and SCALE_ISSUED_EVERY: one transfer in 10 has an issued receipt (receipt.issued_receipts).
// The transfer service's online indexes (transferOnlineIndexes) are built by the migration, as a start does.
// "empty" is the same companies with only the measured batch (5,000 transfers of the large company, their
// items and receipt rows); "full" is everything above.
//
// Measured with the services' own built code, as their gRPC handlers call it, p50/p99 over SCALE_SAMPLES calls
// (default 2,000; a figure stops early after SCALE_LABEL_SECONDS, default 20 s, and says how many calls it made):
//   - a transfer's detail as the transfer service reads it (SqlTransferStore.get, and getForCallback: a rail
//     callback's read); the public GET /wallets/transactions/{id} is the ledger's (test/bench/scale.mjs);
//   - the transfer service's listings: ListBatches (BatchQueries.list, the large company's batches, and a state
//     none matches), GetBatch (its summary over 5,000 items), ListBatchItems (first page, a page 4,000 deep, a
//     status few match), FindSettlements (500 ids: the reconciliation's look-up) and one ListSettlements page
//     (1,000 records of a day);
//   - a receipt: the receipt service's read of one transaction (SqlReadModelStore.transaction), and, separately,
//     the PDF (renderReceipt: the view rendered, signed with the development key, and recorded as issued), and
//     the whole GetTransactionReceipt use case (read + PDF);
//   - the reconciliation engine (@wallet/reconciliation `reconcile`) on a SCALE_RECON_LINES-line ACH report of
//     the day against our records read by the transfer service's ListSettlements / FindSettlements handlers
//     (in process, without the wire; GrpcOurRecords' mapping), in a child process with its heap capped at
//     SCALE_RECON_HEAP_MIB (128): lines/s, CPU µs/line and peak RSS, once with only the day (and the batch) in
//     the table, once full. The run fails unless every line matched and no break was found.
// Prints a JSON report on stdout, progress on stderr; drops the database (SCALE_KEEP=1 keeps it and prints its
// name; SCALE_REUSE=<name> measures a kept one again, full only, without filling it).
//   node test/bench/scale-transfers.mjs     (after `npx turbo run build --filter=@wallet/transfer... --filter=@wallet/receipt... --filter=@wallet/reconciliation...`)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { imp, int, scratchDatabase, timedRuns } from './scale-support.mjs';

const uuidOf = (s) =>
  createHash('md5')
    .update(s)
    .digest('hex')
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
/** The data key the bench seals ACH account numbers with (a scratch database: not a secret). */
const DATA_KEY = 'scale-transfers-bench-data-key-0123456789abcdef';
const BATCH_ITEMS = 5_000;
const DAY_MS = 86_400_000;
/** The reconciliation day's transfer g (1…n): its id, provider id, amount, status and settlement time. */
const recon = {
  id: (g) => uuidOf(`recon-${g}`),
  providerId: (g) => `ach_${g.toString(16).padStart(24, '0')}`,
  amount: (g) => 1_000 + ((g * 7) % 500_000),
  status: (g) => (g % 10 === 3 ? 'FAILED' : 'COMPLETED'),
  at: (dayStart, n, g) => dayStart + Math.floor(((g - 1) * 86_399_000) / n),
};

/** Runs the measurements; returns the report (also what the CLI prints). */
export async function runTransfersScaleBench(opts = {}) {
  const { Database, createLogger } = await import('@wallet/platform');
  const { transferMigrations, transferOnlineIndexes } = await imp('services/transfer/dist/persistence/migrations/index.js');
  const { TransferDataProtection } = await imp('services/transfer/dist/persistence/data-protection.js');
  const { SqlTransferStore } = await imp('services/transfer/dist/persistence/transfer.store.js');
  const { SqlBatchStore } = await imp('services/transfer/dist/persistence/batch.store.js');
  const { SqlSettlementReader } = await imp('services/transfer/dist/persistence/settlement.store.js');
  const { TransferSettlements } = await imp('services/transfer/dist/app/settlements.js');
  const { BatchQueries } = await imp('services/transfer/dist/app/batch-queries.js');
  const { receiptMigrations } = await imp('services/receipt/dist/persistence/migrations/index.js');
  const { SqlReadModelStore } = await imp('services/receipt/dist/persistence/read-model.store.js');
  const { SqlIssuedReceipts } = await imp('services/receipt/dist/persistence/issued-receipts.store.js');
  const { GetTransactionReceipt } = await imp('services/receipt/dist/app/get-transaction-receipt.js');
  const { renderReceipt } = await imp('services/receipt/dist/app/render-receipt.js');
  const { transactionView } = await imp('services/receipt/dist/domain/receipt-view.js');
  const { PadesReceiptSigner } = await imp('services/receipt/dist/adapters/pades-signer.js');
  const { developmentSigningP12, signingKeyFromP12 } = await imp('services/receipt/dist/adapters/signing-key.js');

  const COMPANIES = opts.companies ?? int('SCALE_COMPANIES', 100_000);
  const TRANSFERS = opts.transfers ?? int('SCALE_TRANSFERS', 2_000_000);
  const LARGE = Math.min(TRANSFERS, opts.large ?? int('SCALE_LARGE_TRANSFERS', 200_000));
  const BATCHES = Math.min(Math.floor(LARGE / BATCH_ITEMS), int('SCALE_BATCHES', 40));
  const RECON_LINES = opts.reconLines ?? int('SCALE_RECON_LINES', 1_000_000);
  const RECON_HEAP = int('SCALE_RECON_HEAP_MIB', 128);
  const ISSUED_EVERY = int('SCALE_ISSUED_EVERY', 10);
  const SAMPLES = opts.samples ?? int('SCALE_SAMPLES', 2_000);
  const LABEL_SECONDS = int('SCALE_LABEL_SECONDS', 20);
  const REUSE = process.env.SCALE_REUSE;
  const KEEP = process.env.SCALE_KEEP === '1' || !!REUSE;
  const say = opts.log ?? ((m) => console.error(`[scale-transfers ${new Date().toISOString().slice(11, 19)}] ${m}`));
  if (COMPANIES < 2) throw new Error('SCALE_COMPANIES must be at least 2');

  const scratch = await scratchDatabase({ prefix: 'scale_transfers', reuse: REUSE, keep: KEEP });
  const { name, url } = scratch;
  const log = createLogger('scale-transfers-bench', 'warn');
  const protection = new TransferDataProtection(DATA_KEY);
  const work = mkdtempSync(join(tmpdir(), 'wallet-scale-transfers-'));
  let db, rdb;
  try {
    // the online indexes too, as a start that migrates (or the migrate Job) builds them; a kept database gets any it lacks
    db = await Database.open({
      url,
      schema: 'transfer',
      migrations: transferMigrations(protection),
      onlineIndexes: transferOnlineIndexes,
      logger: log,
      poolMax: 1,
    });
    await db.migrate();
    rdb = await Database.open({ url, schema: 'receipt', migrations: receiptMigrations, logger: log, poolMax: 1 });
    await rdb.migrate();

    const store = new SqlTransferStore(db, protection);
    const settlements = new TransferSettlements(new SqlSettlementReader(db));
    const batchQueries = new BatchQueries({ batches: new SqlBatchStore(db, protection) });
    const records = new SqlReadModelStore(rdb);
    const now = new Date();
    const key = signingKeyFromP12(developmentSigningP12('scale-bench', now), 'scale-bench', { now, development: true });
    const signer = new PadesReceiptSigner(key);
    const receiptDeps = { records, issued: new SqlIssuedReceipts(rdb), verifyBaseUrl: '', signer, now: () => new Date() };
    const getReceipt = new GetTransactionReceipt(receiptDeps);
    const company = (k) => `md5('trf-scale-' || ${k})::uuid::text`;
    const large = uuidOf('trf-scale-0');
    const batchIdOf = (b) => uuidOf(`batch-${b}`);
    const measuredBatch = batchIdOf('measured');
    // yesterday in Bogotá (UTC-5 all year): the reconciliation's day
    const bogotaToday = new Date(now.getTime() - 5 * 3_600_000).toISOString().slice(0, 10);
    const reconDay = process.env.SCALE_RECON_DAY ?? new Date(Date.parse(`${bogotaToday}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
    const reconStart = Date.parse(`${reconDay}T05:00:00Z`);
    const sealed = protection.sealAccount('000123456789');

    /**
     * Inserts transfers g in (from, to] of one kind (`kind`: 'year', 'recon' or 'measured') with their receipt
     * read-model rows: one statement each, every column as the service writes it, every check kept.
     */
    const fillTransfers = async (kind, from, to) => {
      const head = {
        year: `select g, 'trf-' || g as tag,
                 case when g <= ${LARGE}::bigint then 0 else 1 + ((g * 2654435761) % (${COMPANIES}::bigint - 1)) end as k,
                 case when g % 10 < 3 then 'ACH' else 'BREB' end as rail, abs(hashtext('draw-' || g)) % 100 as r,
                 case when g <= ${BATCHES * BATCH_ITEMS}::bigint then md5('batch-' || ((g - 1) / ${BATCH_ITEMS}))::uuid end as batch_id,
                 now() - interval '1 minute' - random() * interval '365 days' as at0 from generate_series($1::bigint + 1, $2::bigint) g`,
        measured: `select g, 'mb-' || g as tag, 0::bigint as k, case when g % 10 < 3 then 'ACH' else 'BREB' end as rail,
                 abs(hashtext('draw-mb-' || g)) % 100 as r, '${measuredBatch}'::uuid as batch_id,
                 now() - interval '3 days' + g * interval '10 ms' as at0 from generate_series($1::bigint + 1, $2::bigint) g`,
        recon: `select g, 'recon-' || g as tag, 1 + ((g * 2654435761) % (${COMPANIES}::bigint - 1)) as k, 'ACH' as rail,
                 case when g % 10 = 3 then 91 else 0 end as r, null::uuid as batch_id,
                 '${new Date(reconStart).toISOString()}'::timestamptz + ((g - 1) * 86399000 / ${RECON_LINES}::bigint) * interval '1 ms'
                   - interval '5 seconds' as at0
            from generate_series($1::bigint + 1, $2::bigint) g`,
      }[kind];
      // The year's transfers keep off the reconciliation's day (its settled ACH records are only the report's).
      const atSql =
        kind === 'year'
          ? `case when at0 >= '${new Date(reconStart - 120_000).toISOString()}'::timestamptz and at0 < '${new Date(reconStart + DAY_MS).toISOString()}'::timestamptz
                  then at0 - interval '2 days' else at0 end`
          : 'at0';
      const settledAt = kind === 'recon' ? `at + interval '5 seconds'` : `at + (g % 60) * interval '1 second' + interval '2 seconds'`;
      await db.prepared(
        `with s as (${head}),
         c as (
           select s.*, ${atSql} as at, ${company('s.k')} as company_id,
                  ${kind === 'recon' ? `1000 + (g * 7) % 500000` : `2000000 + (g * 104729) % 500000000`} as amount
             from s),
         st as (
           select c.*, case when ${kind === 'year' ? 'true' : 'false'} and at > now() - interval '20 minutes' and r >= 50 then (array['RECEIVED', 'RESERVED', 'DISPATCHED'])[1 + g % 3]
                            when r < 85 then 'COMPLETED' when r < 94 then 'FAILED' else 'REJECTED' end as state,
                  r between 85 and 90 or ${kind === 'recon' ? 'true' : 'false'} as taken,
                  case when rail = 'ACH' then 350000 else 150000 end as fixed_fee, case when rail = 'ACH' then 0 else amount / 1000 end as variable_fee
             from c),
         v as (select st.*, fixed_fee + variable_fee as subtotal, (fixed_fee + variable_fee) * 19 / 100 as iva,
                      ${settledAt} as settled_at, (10000000 + g % 89999999)::text as doc from st),
         ins as (
         insert into transfer.transfers (id, company_id, api_key_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable,
           iva_amount, total_charged, target_name, target_document, counterparty_document, reference, description, destination, hold_id,
           provider_transfer_id, error_message, reject_code, dispatch_attempts, dispatch_ambiguous, next_attempt_at, created_at, dispatched_at,
           completed_at, finished_at, updated_at, release_event, account_number_sealed, account_number_masked, idempotency_key,
           idempotency_fingerprint, batch_id, accepted_at, destination_fingerprint)
         select md5(tag)::uuid, company_id, case when batch_id is null then 'key_scale' end, rail, state, amount, fixed_fee, variable_fee, subtotal,
           true, iva, subtotal + iva, (array['Ana Gómez', 'Luis Pérez', 'María Rodríguez', 'Jorge Díaz'])[1 + g % 4], doc, doc,
           case when g % 3 = 0 then 'REF-' || g end, case when g % 2 = 0 then 'Pago proveedor ' || g end,
           case when rail = 'ACH' then jsonb_build_object('kind', 'ACH', 'bankId', 1 + g % 5, 'bankName', 'BANCOLOMBIA', 'bankAchCode', '1007',
                  'accountTypeId', 1, 'documentTypeId', 1, 'documentNumber', doc, 'holderFirstName', 'Ana', 'holderLastName', 'Gómez')
                else jsonb_build_object('kind', 'BREB', 'keyType', 'PHONE', 'keyValue', '300' || (1000000 + g % 8999999), 'anchorHandle', 'anc_' || g,
                  'bankName', 'NEQUI', 'bankAccountType', 'SAVINGS') end,
           case when state <> 'REJECTED' then md5('hold-' || tag)::uuid end,
           case when state in ('COMPLETED', 'DISPATCHED') or taken then ${kind === 'recon' ? `'ach_' || lpad(to_hex(g), 24, '0')` : `'prv_' || tag`} end,
           case when state = 'FAILED' then 'La cuenta destino no existe' when state = 'REJECTED' then 'Límite de la contraparte excedido' end,
           case when state = 'REJECTED' then 'COUNTERPARTY_LIMIT' end,
           case when state in ('COMPLETED', 'DISPATCHED') or taken then 1 else 0 end, false,
           case when state in ('RECEIVED', 'RESERVED', 'DISPATCHED') then at + interval '30 seconds' end, at,
           case when state in ('COMPLETED', 'DISPATCHED') or taken then at + interval '1 second' end,
           case when state = 'COMPLETED' then settled_at end, case when state in ('COMPLETED', 'FAILED', 'REJECTED') then settled_at end,
           case when state in ('COMPLETED', 'FAILED', 'REJECTED') then settled_at else at end,
           case when state = 'FAILED' then 'failed' end,
           case when rail = 'ACH' then $3 end, case when rail = 'ACH' then '****6789' end,
           case when g % 4 = 0 and batch_id is null then 'idem-' || tag end, case when g % 4 = 0 and batch_id is null then 'hm1:' || md5(tag) || md5(tag) end,
           batch_id, case when state <> 'REJECTED' then at end, 'hm1:' || md5('dest-' || (g % 50000)) || md5('dest-' || (g % 50000))
           from v
         returning id, company_id, state, rail, amount, subtotal_fee, iva_amount, total_charged, target_name, target_document, reference, description,
                   destination, account_number_masked, provider_transfer_id, error_message, api_key_id, created_at, completed_at, finished_at, updated_at)
         insert into receipt.transactions (id, company_id, status, status_at, rail, amount, total_fee, iva_amount, net_amount, target_name,
           target_document, reference, description, bank_name, bank_account_type, bank_account_masked, provider_transfer_id, error_message,
           api_key_id, created_at, completed_at, last_event_at, last_event_id, breb_key, kind)
         select id::text, company_id, case when state = 'COMPLETED' then 'COMPLETED' when state in ('FAILED', 'REJECTED') then 'FAILED' else 'PENDING' end,
           updated_at, rail, amount, subtotal_fee, iva_amount, amount, target_name, target_document, reference, description,
           destination->>'bankName', case when rail = 'ACH' then 'AHORROS' else destination->>'bankAccountType' end,
           case when rail = 'ACH' then account_number_masked end, provider_transfer_id, error_message, api_key_id, created_at, completed_at,
           updated_at, 'evt_' || md5(id::text), case when rail = 'BREB' then (destination->>'keyValue') || ' (PHONE)' end, null
           from ins`,
        [from, to, sealed.sealed],
      );
    };

    /** A batch of 5,000 executed items over the transfers that carry its id (the measured one, or the year's). */
    const fillBatch = async (batchId, createdAgoDays) => {
      await db.prepared(
        `insert into transfer.batches (id, company_id, api_key_id, reference, request_fingerprint, state, mode, source, description, item_count,
           valid_count, invalid_count, iva_applicable, created_at, updated_at, expires_at, executed_at, completed_at)
         select $1::text::uuid, $2, 'key_scale', 'LOTE-' || left($1::text, 8), 'hm1:' || md5($1::text) || md5($1::text), 'PARTIALLY_FAILED', 'ALL', 'CSV', 'Nómina', ${BATCH_ITEMS},
           ${BATCH_ITEMS}, 0, true, now() - $3::int * interval '1 day', now() - $3::int * interval '1 day', now() - ($3::int - 1) * interval '1 day',
           now() - $3::int * interval '1 day', now() - $3::int * interval '1 day' + interval '1 hour'`,
        [batchId, large, createdAgoDays],
      );
      await db.prepared(
        `insert into transfer.batch_items (batch_id, seq, line, status, rail, amount, fixed_fee, variable_fee, subtotal_fee, iva_amount, total_charged,
           target_name, target_document, counterparty_document, reference, description, destination, account_number_sealed, account_number_masked, transfer_id)
         select batch_id, row_number() over (order by created_at, id), 1 + row_number() over (order by created_at, id), 'EXECUTED', rail, amount,
           fixed_fee, variable_fee, subtotal_fee, iva_amount, total_charged, target_name, target_document, counterparty_document, reference,
           description, destination, account_number_sealed, account_number_masked, id
           from transfer.transfers where batch_id = $1::uuid and state <> 'REJECTED'`,
        [batchId],
      );
      // a rejected transfer never was one: its item is REJECTED (no transfer)
      await db.prepared(
        `insert into transfer.batch_items (batch_id, seq, line, status, rail, amount, target_name, target_document, error_code, error_message)
         select batch_id, ${BATCH_ITEMS} - row_number() over (order by id) + 1, ${BATCH_ITEMS} - row_number() over (order by id) + 2, 'REJECTED', rail,
           amount, target_name, target_document, 'COUNTERPARTY_LIMIT', 'Límite de la contraparte excedido'
           from transfer.transfers where batch_id = $1::uuid and state = 'REJECTED'`,
        [batchId],
      );
      await db.prepared(`update transfer.transfers set batch_id = null where batch_id = $1::uuid and state = 'REJECTED'`, [batchId]);
    };

    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

    /** Every read, p50/p99, through the services' stores and use cases. */
    const measure = async () => {
      const out = {};
      const run = timedRuns(out, { samples: SAMPLES, labelSeconds: LABEL_SECONDS, say });
      // transfers of the whole table, a sample spread over it (each call another row)
      const [{ n: estimate }] = await db.query(`select reltuples::bigint as n from pg_class where oid = 'transfer.transfers'::regclass`);
      const percent = Math.min(100, Math.max(0.05, (100 * SAMPLES * 3) / Math.max(1, Number(estimate))));
      const picked = await db.query(`select id::text as id, company_id, rail from transfer.transfers tablesample system (${percent}) limit ?`, [SAMPLES]);
      if (picked.length === 0) throw new Error('no transfer to read');
      const at = (i) => picked[i % picked.length];
      await run('transferGet', async (i) => {
        if (!(await store.get(at(i).id))) throw new Error(`transfer ${at(i).id} not found`);
      });
      await run('transferGetForCallback', (i) => store.getForCallback(`evt_scale_${i}`, at(i).id));
      const unknown = Array.from({ length: SAMPLES }, (_, i) => uuidOf(`none-${i}`));
      await run('transferGetUnknown', (i) => store.get(unknown[i % unknown.length]));
      // the reconciliation's look-up: 500 ids of any day
      const ach = picked.filter((p) => p.rail === 'ACH').map((p) => p.id);
      const lookups = Array.from({ length: 20 }, (_, j) => Array.from({ length: 500 }, (_, i) => ach[(j * 500 + i) % Math.max(1, ach.length)] ?? unknown[i]));
      await run('findSettlements500', (i) => settlements.find('ach', lookups[i % lookups.length]), 200);
      // one ListSettlements page (1,000) of a random day of the year, BREB (the year's: the ACH day is measured below)
      const days = Array.from({ length: SAMPLES }, () =>
        new Date(now.getTime() - 5 * 3_600_000 - Math.floor(2 + rand() * 360) * DAY_MS).toISOString().slice(0, 10),
      );
      await run('listSettlementsPage', async (i) => {
        const it = settlements.list('breb', days[i % days.length], 1000);
        await it.next();
        await it.return();
      });
      // batches: the large company's
      await run('listBatches', () => batchQueries.list(large, { limit: 20 }));
      await run('listBatchesStateNone', () => batchQueries.list(large, { state: 'EXPIRED', limit: 20 }));
      await run('getBatch5000', () => batchQueries.get(large, measuredBatch), 500);
      await run('batchItemsFirstPage', () => batchQueries.items(large, { batchId: measuredBatch, limit: 100 }));
      const deep = Buffer.from('4000').toString('base64url');
      await run('batchItemsPage4000Deep', () => batchQueries.items(large, { batchId: measuredBatch, limit: 100, cursor: deep }));
      await run('batchItemsStatusFailed', () => batchQueries.items(large, { batchId: measuredBatch, status: 'FAILED', limit: 100 }));
      // receipts
      const companyRef = { name: 'Empresa de prueba S.A.S.', nit: '900123456-7' };
      await run('receiptRead', async (i) => {
        if (!(await records.transaction(at(i).company_id, at(i).id))) throw new Error(`receipt row ${at(i).id} not found`);
      });
      const one = await records.transaction(at(0).company_id, at(0).id);
      const view = transactionView(one, companyRef);
      const noRecord = { ...receiptDeps, issued: { record: async () => {}, find: async () => [] } };
      await run('receiptPdfOnly', () => renderReceipt(noRecord, view, { companyId: one.companyId, subjectId: one.id }), 500);
      await run('receiptUseCase', (i) => getReceipt.execute(at(i).company_id, at(i).id, companyRef), 500);
      return out;
    };

    /** Writes the provider's report of the reconciliation day (settlement order, the sandbox's CSV). */
    const writeReport = async (file) => {
      const out = createWriteStream(file);
      let buf = 'provider_id,our_id,direction,amount_cents,fee_cents,status,value_date,accepted_at,settled_at,counterparty\r\n';
      let lines = 0;
      let sum = 0n;
      for (let g = 1; g <= RECON_LINES; g++) {
        const settled = recon.at(reconStart, RECON_LINES, g);
        const amt = recon.amount(g);
        buf += `${recon.providerId(g)},${recon.id(g)},OUT,${amt},0,${recon.status(g)},${reconDay},${new Date(settled - 4000).toISOString()},${new Date(settled).toISOString()},1007 ****6789\r\n`;
        lines += 1;
        sum += BigInt(amt);
        if (buf.length >= 1 << 20) {
          if (!out.write(buf)) await new Promise((r) => out.once('drain', r));
          buf = '';
        }
      }
      buf += `TRAILER,${lines},${sum},0\r\n`;
      await new Promise((resolve, reject) => {
        out.once('error', reject);
        out.end(buf, resolve);
      });
      return { lines, bytes: statSync(file).size };
    };
    const reconcileDay = (file) =>
      new Promise((resolve, reject) => {
        const c = spawn(
          process.execPath,
          [...(RECON_HEAP ? [`--max-old-space-size=${RECON_HEAP}`] : []), fileURLToPath(import.meta.url), 'reconcile', url, file, reconDay, work],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        );
        let text = '';
        c.stdout.on('data', (d) => (text += d));
        c.on('error', reject);
        c.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text.trim().split('\n').at(-1))) : reject(new Error(`reconcile exited ${code}`))));
      });

    const report = {
      companies: COMPANIES,
      transfers: TRANSFERS,
      largeTransfers: LARGE,
      batches: BATCHES,
      reconLines: RECON_LINES,
      reconDay,
      samples: SAMPLES,
      labelSeconds: LABEL_SECONDS,
    };
    const file = join(work, 'ach-report.csv');
    if (RECON_LINES > 0) {
      const t0 = performance.now();
      report.reconReport = await writeReport(file);
      say(
        `the day's report: ${report.reconReport.lines.toLocaleString('en')} lines, ${(report.reconReport.bytes / 1e6).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    }

    if (!REUSE) {
      // Empty: the same companies, only the measured batch (5,000 transfers of the large company, their items and receipts).
      await fillTransfers('measured', 0, BATCH_ITEMS);
      await fillBatch(measuredBatch, 3);
      await db.query('vacuum analyze transfer.transfers, transfer.batches, transfer.batch_items');
      await rdb.query('vacuum analyze receipt.transactions');
      say('empty');
      report.empty = await measure();

      const fill = { t0: performance.now() };
      const CHUNK = 250_000;
      for (let done = 0; done < RECON_LINES; done += CHUNK) {
        await fillTransfers('recon', done, Math.min(RECON_LINES, done + CHUNK));
        say(`${Math.min(RECON_LINES, done + CHUNK).toLocaleString('en')} of the day's transfers…`);
      }
      await db.query('vacuum analyze transfer.transfers');
      fill.reconSeconds = +((performance.now() - fill.t0) / 1000).toFixed(1);
      if (RECON_LINES > 0) {
        say(`the day only (${RECON_LINES.toLocaleString('en')} of it in ${fill.reconSeconds} s): reconciling`);
        report.reconDayOnly = await reconcileDay(file);
        say(`  ${JSON.stringify(report.reconDayOnly)}`);
      }

      const t1 = performance.now();
      for (let done = 0; done < TRANSFERS; done += CHUNK) {
        await fillTransfers('year', done, Math.min(TRANSFERS, done + CHUNK));
        say(`${Math.min(TRANSFERS, done + CHUNK).toLocaleString('en')} of the year's transfers…`);
      }
      for (let b = 0; b < BATCHES; b++) await fillBatch(batchIdOf(b), 4 + b * 7);
      if (ISSUED_EVERY > 0)
        await rdb.prepared(
          `insert into receipt.issued_receipts (receipt_number, sha256, signer_sha256, signer_name, kind, subject_id, company_id, summary, first_issued_at)
           select 'TRX-' || upper(substr(md5(id), 1, 10)), md5(id) || md5(id || 'h'), $1, $2, 'TRANSACTION', id, company_id,
             jsonb_build_object('title', 'Comprobante de transferencia', 'statusLabel', 'Exitosa', 'grandTotal', amount::text), last_event_at
             from receipt.transactions where abs(hashtext(id)) % ${ISSUED_EVERY} = 0`,
          [signer.certificate.sha256, signer.certificate.name],
        );
      fill.yearSeconds = +((performance.now() - t1) / 1000).toFixed(1);
      const t2 = performance.now();
      await db.query('vacuum analyze transfer.transfers, transfer.batches, transfer.batch_items');
      await rdb.query('vacuum analyze receipt.transactions, receipt.issued_receipts');
      fill.vacuumSeconds = +((performance.now() - t2) / 1000).toFixed(1);
      report.fillSeconds = +((performance.now() - fill.t0) / 1000).toFixed(1);
      report.fill = { reconDaySeconds: fill.reconSeconds, yearSeconds: fill.yearSeconds, vacuumAnalyzeSeconds: fill.vacuumSeconds };
    }
    const [size] = await db.query(
      `select pg_total_relation_size('transfer.transfers') as t, pg_total_relation_size('transfer.batch_items') as b,
              pg_total_relation_size('receipt.transactions') as r, pg_total_relation_size('receipt.issued_receipts') as i`,
    );
    const mib = (b) => Math.round(Number(b) / 1048576);
    report.sizesMiB = { transfers: mib(size.t), batchItems: mib(size.b), receiptTransactions: mib(size.r), issuedReceipts: mib(size.i) };
    const mix = await db.query(
      `select rail, state, count(*)::int as n, count(*) filter (where company_id = ?)::int as large from transfer.transfers group by 1, 2 order by 1, 2`,
      [large],
    );
    report.mix = Object.fromEntries(mix.map((r) => [`${r.rail} ${r.state}`, { all: r.n, large: r.large }]));
    const [counts] = await db.query(
      `select (select count(*)::int from transfer.transfers) as transfers, (select count(*)::int from transfer.batch_items) as items,
              (select count(*)::int from receipt.transactions) as receipts, (select count(*)::int from receipt.issued_receipts) as issued`,
    );
    report.rows = counts;
    say(`full ${report.fillSeconds ? `(filled in ${report.fillSeconds} s) ` : ''}${JSON.stringify(report.rows)} ${JSON.stringify(report.sizesMiB)}`);
    say('full');
    report.full = await measure();
    if (RECON_LINES > 0) {
      say('full: reconciling the day');
      report.reconFull = await reconcileDay(file);
      say(`  ${JSON.stringify(report.reconFull)}`);
    }
    if (KEEP) say(`kept the database ${name}`);
    return report;
  } finally {
    rmSync(work, { recursive: true, force: true });
    await rdb?.close();
    await db?.close();
    await scratch.done();
  }
}

/**
 * The child that reconciles: the engine on the report file, our records read by the transfer service's
 * ListSettlements / FindSettlements handlers over its settlement store (mapped as GrpcOurRecords maps them).
 */
async function reconcileChild(url, file, date, dir) {
  const { Database, createLogger } = await import('@wallet/platform');
  const { reconcile, fileReportRecords, SpillSorter, ourRecordOf } = await import('@wallet/reconciliation');
  const { InMemoryBreakSink } = await import('@wallet/reconciliation/testing');
  const { SqlSettlementReader } = await imp('services/transfer/dist/persistence/settlement.store.js');
  const { TransferSettlements } = await imp('services/transfer/dist/app/settlements.js');
  const { transferHandlers } = await imp('services/transfer/dist/grpc/transfer.handlers.js');
  const db = await Database.open({ url, schema: 'transfer', migrations: [], logger: createLogger('scale-transfers-recon', 'warn'), poolMax: 1 });
  const handlers = transferHandlers({}, new TransferSettlements(new SqlSettlementReader(db)));
  const ours = {
    async *settled(rail, day) {
      for await (const batch of handlers.listSettlements({ rail, date: day, batchSize: 0 })) {
        if (batch.records.length > 0) yield batch.records.map((s) => ourRecordOf(rail, s));
      }
    },
    async find(rail, ids) {
      if (ids.length === 0) return [];
      return (await handlers.findSettlements({ rail, ids: [...ids] })).records.map((s) => ourRecordOf(rail, s));
    },
  };
  const baseRss = process.memoryUsage().rss;
  let sampledPeak = baseRss;
  const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss())), 50);
  const sink = new InMemoryBreakSink();
  let sorter;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await reconcile('ach', date, fileReportRecords(file), { ours, sink, sorter: () => (sorter = new SpillSorter({ dir })) });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  await db.close();
  if (result.outcome !== 'RECONCILED') throw new Error(`the day was not reconciled: ${JSON.stringify(result)}`);
  if (result.breaks.total !== 0 || result.matched.count !== result.report.lines)
    throw new Error(
      `expected every line matched and no break: ${JSON.stringify({ matched: result.matched, breaks: result.breaks, keys: sink.keys().slice(0, 10) })}`,
    );
  return {
    lines: result.report.lines,
    matched: result.matched.count,
    breaks: result.breaks.total,
    seconds: +seconds.toFixed(2),
    linesPerSecond: Math.round(result.report.lines / seconds),
    cpuUsPerLine: +((cpu.user + cpu.system) / result.report.lines).toFixed(1),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    sampledPeakRssMiB: Math.round(sampledPeak / 2 ** 20),
    baseRssMiB: Math.round(baseRss / 2 ** 20),
    runs: sorter?.spilledRuns ?? 0,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv[2] === 'reconcile') {
    console.log(JSON.stringify(await reconcileChild(...process.argv.slice(3, 7))));
  } else {
    const report = await runTransfersScaleBench();
    console.log(JSON.stringify(report, null, 2));
  }
}
