// The reconciliation's read path at scale (docs/reconciliation.md "Our records over gRPC"): N settled
// transfers of one Bogotá day (default 1,000,000) inserted in a test database, then streamed through the
// real transfer service's ListSettlements (mutual TLS, as `reconciliation`) by GrpcOurRecords, checking
// the key order. Server and client share this process: run it with a heap cap to see the bound.
//   node --max-old-space-size=128 test/bench/recon-our-records.mjs [N]
import { createTestDatabase } from '@wallet/platform/testing';
import { devMeshTls } from '@wallet/platform';
import { startTransfer } from '@wallet/transfer/testing';
import { GrpcOurRecords } from '@wallet/reconciliation';
const N = Number(process.argv[2] ?? 1_000_000);
const tdb = await createTestDatabase('recon_scale');
const t = await startTransfer({
  databaseUrl: tdb.url,
  namespace: `scale${process.pid}`,
  ledgerAddress: '127.0.0.1:9',
  providerUrl: 'http://127.0.0.1:9',
  port: 0,
});
let t0 = Date.now();
await t.db.query(`insert into transfer.transfers (id, company_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable, iva_amount,
  total_charged, target_name, target_document, counterparty_document, destination, provider_transfer_id, completed_at, finished_at)
  select gen_random_uuid(), 'co', 'BREB', 'COMPLETED', 1000 + g, 0, 0, 0, false, 0, 0, 'X', '1', '1', '{"kind":"BREB"}'::jsonb, 'p' || g,
    '2025-03-14T05:00:00Z'::timestamptz + (g % 86400000) * interval '1 ms', '2025-03-14T05:00:00Z'::timestamptz + (g % 86400000) * interval '1 ms'
  from generate_series(1, ${N}) g`);
await t.db.query('analyze transfer.transfers');
console.log(`inserted ${N} in ${Date.now() - t0} ms`);
const ours = new GrpcOurRecords({ mesh: devMeshTls('reconciliation'), transferAddress: t.address });
global.gc?.();
let peakHeap = 0,
  peakRss = 0,
  n = 0,
  last = '';
const timer = setInterval(() => {
  const m = process.memoryUsage();
  peakHeap = Math.max(peakHeap, m.heapUsed);
  peakRss = Math.max(peakRss, m.rss);
}, 50);
const cpu0 = process.cpuUsage();
t0 = Date.now();
for await (const b of ours.settled('breb', '2025-03-14')) {
  for (const r of b) {
    if (r.ourId <= last) throw new Error('order');
    last = r.ourId;
  }
  n += b.length;
}
const ms = Date.now() - t0;
clearInterval(timer);
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    records: n,
    ms,
    perSec: Math.round(n / (ms / 1000)),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakHeapMiB: Math.round(peakHeap / 2 ** 20),
    peakRssMiB: Math.round(peakRss / 2 ** 20),
  }),
);
ours.close();
await t.stop();
await tdb.drop();
