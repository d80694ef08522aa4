import { randomUUID } from 'node:crypto';
import { AppError, createLogger, devMeshTls } from '@wallet/platform';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import type { BatchDeps } from '../../src/app/deps.js';
import { CreateBatch } from '../../src/app/create-batch.js';
import { transferDeps } from '../../src/app/deps.js';
import type { LedgerPort, RailPort } from '../../src/app/ports.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { batchUseCases, transferUseCases } from '../../src/app/use-cases.js';
import { SqlApprovalStore } from '../../src/persistence/approval.store.js';
import { SqlBatchStore } from '../../src/persistence/batch.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { expectLedgerOk, newCompany, sagaSettings, startHarness, testProtection, type Harness } from './harness.js';
import { KEY, directory } from './interleaving-support.js';

/**
 * docs/batches.md, "Safety": a batch line's dispatch clock (RAIL_DISPATCH_TIMEOUT_SECONDS) starts when the line is
 * accepted for dispatch (its funds reserved), not when the batch was executed. A ledger outage longer
 * than the timeout while the batch is FUNDING must not make the sweeper fail lines never sent.
 */
describe('bulk payouts: the dispatch clock of a line', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('starts when the line is funded: a funding outage longer than the timeout does not fail lines that were never sent', async () => {
    const co = await newCompany(h, { breb: 1_000_000n });
    const real = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    let ledgerDown = true;
    const ledger: LedgerPort = new Proxy(real, {
      get(target, prop, recv) {
        if (prop === 'reserveBatch') {
          return (...a: Parameters<LedgerPort['reserveBatch']>) =>
            ledgerDown ? Promise.reject(new AppError('SERVICE_UNAVAILABLE')) : target.reserveBatch(...a);
        }
        const v = Reflect.get(target, prop, recv) as unknown;
        return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
      },
    }) as LedgerPort;
    const dispatched: string[] = [];
    // The rail is down for dispatch (the line is retried), and has never seen any line.
    const rails: RailPort = {
      async dispatch(t) {
        dispatched.push(t.id);
        return { outcome: 'unavailable', ambiguous: false, error: 'rail down' };
      },
      async status() {
        return { found: false };
      },
      async validateAchAccount() {
        return { result: 'valid' };
      },
    };
    const base = transferDeps({
      store: new SqlTransferStore(h.transfer!.db, testProtection),
      approvals: new SqlApprovalStore(h.transfer!.db, testProtection),
      ledger,
      directory,
      rails,
      settings: sagaSettings('clock-secret', { dispatchTimeoutSeconds: 60, dispatchRetryBaseMs: 60_000, dispatchRetryMaxMs: 60_000 }),
      log: createLogger('batch-clock', process.env.TEST_LOG_LEVEL ?? 'silent'),
      eventsWritten: () => undefined,
      destinationFingerprint: (d) => testProtection.destinationFingerprint(d),
    });
    const uc = transferUseCases(base);
    const batches = new SqlBatchStore(h.transfer!.db, testProtection);
    const deps: BatchDeps = {
      ...base,
      batches,
      batchSettings: { dispatchConcurrency: 2, lookupConcurrency: 2, fundingLeaseMs: 0, pollMs: 0, awaitDispatch: true },
    };
    const batchUc = batchUseCases(deps, uc.saga);
    const runner = batchUc.runner;
    const sweeper = new Sweeper(base, uc.saga, { intervalMs: 3_600_000, batch: 50, leaseMs: 0 });
    try {
      const created = await new CreateBatch(deps).execute({ companyId: co.id }, co.profile, {
        mode: 'ALL',
        source: 'JSON',
        requestHash: randomUUID(),
        items: [10_000n, 20_000n].map((amount, i) => ({
          seq: i + 1,
          line: 0,
          send: { amount, brebKey: { type: 'PHONE', value: KEY.keyValue }, targetName: KEY.recipient.fullName, targetDocument: KEY.recipient.idValue },
        })),
      });
      // Executed while the ledger is down: the batch stays FUNDING, its lines recorded, nothing sent.
      const executing = await batchUc.execute.execute({ companyId: co.id }, co.profile, created.batch.id);
      expect(executing.state).toBe('FUNDING');
      // The outage lasts 10 minutes (the lines were recorded then), longer than the 60 s dispatch timeout.
      await h.transfer!.db.prepared(`update transfer.transfers set created_at = now() - interval '10 minutes' where batch_id = $1::uuid`, [created.batch.id]);
      ledgerDown = false;
      const b = (await batches.get(co.id, created.batch.id))!;
      await runner.fund(b, false);
      expect(dispatched).toHaveLength(2); // the first attempt, the rail down: retried later
      // The sweeper looks at the lines now: they were funded (accepted for dispatch) a moment ago.
      await h.transfer!.db.prepared(`update transfer.transfers set next_attempt_at = now() where batch_id = $1::uuid`, [created.batch.id]);
      await sweeper.tick();
      const rows = await h.transfer!.db.prepared<{ state: string }>('select state from transfer.transfers where batch_id = $1::uuid order by amount', [
        created.batch.id,
      ]);
      expect(rows.map((r) => r.state)).toEqual(['RESERVED', 'RESERVED']);
      expect(dispatched).toHaveLength(4); // tried again, not failed as a dispatch timeout
    } finally {
      // Leave nothing held: the outage outlasts the timeout after funding too, and the sweeper releases the lines.
      await h.transfer!.db.prepared(`update transfer.transfers set next_attempt_at = now(), created_at = now() - interval '1 day' where company_id = $1`, [
        co.id,
      ]);
      await h
        .transfer!.db.prepared(`update transfer.transfers set accepted_at = now() - interval '1 day' where company_id = $1`, [co.id])
        .catch(() => undefined);
      await sweeper.tick();
      real.close();
    }
    await expectLedgerOk(h);
  });
});
