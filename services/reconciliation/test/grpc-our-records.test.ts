import { SpillSorter } from '../src/adapters/spill-sorter.js';
import { reconcile } from '../src/app/reconcile.js';
import { InMemoryBreakSink } from '../src/testing.js';
import { D, startBrebDay, type BrebDay } from './support/breb-day.js';

/**
 * The engine against the sandbox's Bre-B report AND our books as the real transfer service serves
 * them (ListSettlements / FindSettlements over mutual TLS, as the mesh identity `reconciliation`):
 * what the transfer integration harness starts (ledger, sandbox, a callback receiver, transfer),
 * two real sends (one completed, one failed by the sandbox's 13 rule), moved to a fixed Bogotá day on
 * both sides as the provider settled them. Zero breaks; then one injected amount discrepancy is
 * exactly one break.
 */

describe('reconciling a Bre-B day against the transfer service over gRPC', () => {
  let day: BrebDay;

  beforeAll(async () => {
    day = await startBrebDay('recon_grpc');
  }, 120_000);
  afterAll(async () => {
    await day?.stop();
  });

  const run = async () => {
    const sink = new InMemoryBreakSink();
    const r = await reconcile('breb', D, await day.source.open('breb', D), { ours: day.ours, sink, sorter: () => new SpillSorter({ runLines: 2 }) });
    if (r.outcome !== 'RECONCILED') throw new Error(`rejected: ${r.reason} ${r.detail}`);
    return { r, sink };
  };

  it('the day streamed from the transfer service matches the report: a completed and a failed transfer, zero breaks', async () => {
    const batches: string[][] = [];
    for await (const b of day.ours.settled('breb', D)) batches.push(b.map((x) => x.ourId));
    expect(batches).toEqual([day.ids.ok.our, day.ids.failed.our].sort().map((id) => [id])); // batchSize 1: one stream message per record
    const { r, sink } = await run();
    expect(r.ours).toEqual({ count: 2, amountCents: 400_013n, netCents: 150_000n }); // only the COMPLETED send moved rail_clearing(BREB)
    expect(r.matched.count).toBe(2);
    expect(r.breaks.total).toBe(0);
    expect(sink.keys()).toEqual([]);
  });

  it('one injected amount discrepancy → exactly that break, with our amount from the transfer service', async () => {
    await day.inject({ kind: 'amount', ref: day.ids.ok.provider, amountCents: 150_100 });
    const { r, sink } = await run();
    expect(sink.keys()).toEqual([`breb:${D}:amount_mismatch:${day.ids.ok.provider}`]);
    expect(sink.byKey.get(sink.keys()[0]!)).toMatchObject({
      ourId: day.ids.ok.our,
      ours: { amountCents: 150_000n, status: 'COMPLETED' },
      theirs: { amountCents: 150_100n },
    });
    expect(r.breaks.total).toBe(1);
  });
});
