import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, createLogger, devMeshTls } from '@wallet/platform';
import { Choreography } from '@wallet/platform/testing';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import type { BatchDeps } from '../../src/app/deps.js';
import { CreateBatch } from '../../src/app/create-batch.js';
import { transferDeps } from '../../src/app/deps.js';
import type { BatchStore, RailPort } from '../../src/app/ports.js';
import { batchUseCases, transferUseCases } from '../../src/app/use-cases.js';
import { SqlApprovalStore } from '../../src/persistence/approval.store.js';
import { SqlBatchStore } from '../../src/persistence/batch.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { Rail, expectLedgerOk, newCompany, sagaSettings, startHarness, testProtection, wallet, type Harness } from './harness.js';
import { KEY, directory } from './interleaving-support.js';

/**
 * docs/batches.md §3 ("An execute and a cancel at once: exactly one wins"): an execute and a cancel of the same validated batch at once, under every interleaving
 * fast-check's scheduler explores (the batch store's reads and writes are the scheduling points).
 * Exactly one wins; the loser answers 409 INVALID_STATE_TRANSITION whichever it is (an execute that
 * loses to the cancel used to answer 200 with the batch CANCELLED); a cancelled batch holds nothing.
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 20);

describe('bulk payouts: execute against cancel (fast-check scheduler)', () => {
  let h: Harness;
  let choreo: Choreography | undefined;
  const schedules = fc.scheduler({
    act: Choreography.act(() => choreo),
  });
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it(`exactly one wins; the loser is 409 INVALID_STATE_TRANSITION, in ${RUNS} schedules`, async () => {
    const ledger = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    const rails: RailPort = {
      async dispatch() {
        return { outcome: 'unavailable', ambiguous: false, error: 'not in this test' };
      },
      async status() {
        return { found: false };
      },
      async validateAchAccount() {
        return { result: 'valid' };
      },
    };
    try {
      await fc.assert(
        fc.asyncProperty(schedules, async (s) => {
          const c = new Choreography(s);
          choreo = c;
          const co = await newCompany(h, { breb: 1_000_000n });
          const base = transferDeps({
            store: new SqlTransferStore(h.transfer!.db, testProtection),
            approvals: new SqlApprovalStore(h.transfer!.db, testProtection),
            ledger,
            directory,
            rails,
            settings: sagaSettings('cancel-secret', { dispatchRetryBaseMs: 60_000, dispatchRetryMaxMs: 60_000 }),
            log: createLogger('batch-cancel', process.env.TEST_LOG_LEVEL ?? 'silent'),
            eventsWritten: () => undefined,
            destinationFingerprint: (d) => testProtection.destinationFingerprint(d),
          });
          const batches = c.wrap('batches', new SqlBatchStore(h.transfer!.db, testProtection) as BatchStore, ['get', 'startExecution', 'transition'], false);
          const deps: BatchDeps = {
            ...base,
            batches,
            batchSettings: { dispatchConcurrency: 2, lookupConcurrency: 2, fundingLeaseMs: 60_000, pollMs: 60_000, awaitDispatch: true },
          };
          const batchUc = batchUseCases(deps, transferUseCases(base).saga);
          const created = await new CreateBatch(deps).execute({ companyId: co.id }, co.profile, {
            mode: 'ALL',
            source: 'JSON',
            requestHash: randomUUID(),
            items: [
              {
                seq: 1,
                line: 0,
                send: {
                  amount: 10_000n,
                  brebKey: { type: 'PHONE', value: KEY.keyValue },
                  targetName: KEY.recipient.fullName,
                  targetDocument: KEY.recipient.idValue,
                },
              },
            ],
          });
          const id = created.batch.id;
          const outcome = (p: Promise<{ state: string }>) =>
            p.then(
              (b) => `ok ${b.state}`,
              (e: unknown) => (e instanceof AppError ? `${e.httpStatus} ${e.code}` : `thrown ${(e as Error).message}`),
            );
          const exec = c.actor('execute', () => outcome(batchUc.execute.execute({ companyId: co.id }, co.profile, id)));
          const cancel = c.actor('cancel', () => outcome(batchUc.cancel.execute({ companyId: co.id }, id)));
          await c.finish();
          const [e, k] = [await exec, await cancel];
          const final = (await new SqlBatchStore(h.transfer!.db, testProtection).get(co.id, id))!.state;
          const w = await wallet(h, co.id, Rail.BREB);
          const found: string[] = [];
          if (final === 'CANCELLED') {
            if (k !== 'ok CANCELLED') found.push(`cancel won but answered ${k}`);
            if (e !== '409 INVALID_STATE_TRANSITION') found.push(`execute lost to the cancel but answered ${e}`);
            if (w.pending !== 0n || w.available !== 1_000_000n) found.push(`a cancelled batch holds ${w.pending}`);
          } else {
            if (!e.startsWith('ok ')) found.push(`execute won (${final}) but answered ${e}`);
            if (k !== '409 INVALID_STATE_TRANSITION') found.push(`cancel lost to the execute but answered ${k}`);
          }
          if (found.length > 0) throw new Error(`${found.join('\n')}\nfinal ${final}\npoints:\n  ${c.trace.join('\n  ')}`);
        }),
        { numRuns: RUNS, endOnFailure: true, ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED) } : {}) },
      );
    } finally {
      ledger.close();
    }
    await expectLedgerOk(h);
  }, 120_000);
});
