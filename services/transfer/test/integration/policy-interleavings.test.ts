import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { AppError, createLogger, devMeshTls } from '@wallet/platform';
import { Choreography } from '@wallet/platform/testing';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { policyUseCases, transferUseCases } from '../../src/app/use-cases.js';
import { transferDeps } from '../../src/app/deps.js';
import { PolicyBook } from '../../src/app/policy-book.js';
import type { PolicyStore } from '../../src/app/policy-ports.js';
import { SqlApprovalStore } from '../../src/persistence/approval.store.js';
import { SqlPolicyStore } from '../../src/persistence/policy.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { CompiledPolicy, policyOf, type PolicyDecision, type PolicyDocumentJson } from '../../src/domain/approval-policy.js';
import { KEY, ScriptedRail, directory } from './interleaving-support.js';
import { approvalViolations } from './saga-invariants.js';
import { expectLedgerOk, newCompany, sagaSettings, startHarness, testProtection, type Harness } from './harness.js';

/**
 * A change of the approval policy racing sends, under every interleaving fast-check's scheduler
 * explores, over the real use cases, the real ledger over gRPC and real Postgres. Version 1 (in force)
 * allows; version 2 (proposed, one signature short) asks two approvals above an amount and refuses
 * ACH. The second ADMIN's signature and two sends each stop at every policy-store call.
 * Whatever the order: each send is decided by exactly one version, recorded with it, and its
 * outcome is that version's decision (allowed → accepted without approval; approvals → waiting with
 * that many; refused → nothing recorded); a send begun after the quorum was committed is decided by
 * version 2: the change is signed on another replica, and no replica keeps a version longer than
 * half the change delay (here none).
 */
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 25);
const SECRET = 'policy-interleavings-secret';

const V1: PolicyDocumentJson = { rules: [], otherwise: { action: 'ALLOW' } };
const V2: PolicyDocumentJson = {
  rules: [
    { id: 'no-ach', when: { rails: ['ACH'] }, then: { action: 'REFUSE', code: 'ACH_BLOCKED' } },
    { id: 'big', when: { amountAtLeastCents: 5_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 2 } },
  ],
  otherwise: { action: 'ALLOW' },
};

describe('approval policy: a change racing sends (fast-check scheduler)', () => {
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

  it(`decides each send by exactly one version, recorded, in ${RUNS} explored schedules`, async () => {
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
    const seen = new Set<string>();
    try {
      await fc.assert(
        fc.asyncProperty(
          schedules,
          fc.tuple(fc.constantFrom(1_000n, 6_000n), fc.constantFrom(1_000n, 6_000n)),
          fc.constantFrom<'BREB' | 'ACH'>('BREB', 'ACH'),
          async (s, amounts, secondRail) => {
            const c = new Choreography(s);
            choreo = c;
            const co = await newCompany(h, { breb: 100_000n, ach: 100_000n });
            const admin = (n: number) => ({ userId: `admin-${n}-${co.id}`, email: `admin${n}@empresa.co`, role: 'ADMIN' as const });

            const realStore = new SqlPolicyStore(h.transfer!.db);
            // Version 1 in force, version 2 proposed: set up outside the race.
            const v1 = await realStore.propose(co.id, `apol_${randomUUID().replace(/-/g, '').slice(0, 24)}`, V1, 2, admin(1), null);
            if (v1.kind !== 'proposed') throw new Error('v1 not proposed');
            await realStore.sign(co.id, v1.policy.id, admin(2), 0, false, () => ({ id: randomUUID(), subject: 'company.policy_changed', payload: {} }));
            const v2 = await realStore.propose(co.id, `apol_${randomUUID().replace(/-/g, '').slice(0, 24)}`, V2, 2, admin(1), null);
            if (v2.kind !== 'proposed') throw new Error('v2 not proposed');

            const store = c.wrap('policies', realStore as PolicyStore, ['decidingVersions', 'sign', 'claimDayTotal', 'paidBefore']);
            const book = new PolicyBook(store, { changeDelayMs: 0, cacheMs: 30_000 });
            let uc: ReturnType<typeof transferUseCases> | undefined;
            const deps = transferDeps({
              store: new SqlTransferStore(h.transfer!.db, testProtection),
              approvals: new SqlApprovalStore(h.transfer!.db, testProtection),
              ledger: ledgerReal,
              directory,
              rails: new ScriptedRail(c, () => uc!, { secret: SECRET, outcome: 'COMPLETED', callbacks: 0 }),
              settings: sagaSettings(SECRET),
              log: createLogger('policy-interleavings', process.env.TEST_LOG_LEVEL ?? 'silent'),
              eventsWritten: () => undefined,
              destinationFingerprint: (d) => testProtection.destinationFingerprint(d),
              policies: book,
            });
            uc = transferUseCases(deps);
            // The change is signed on another replica: its cache is not this one's.
            const elsewhere = new PolicyBook(store, { changeDelayMs: 0, cacheMs: 30_000 });
            const policies = policyUseCases({ ...deps, policies: elsewhere, policyStore: store, policySettings: { changeDelayMs: 0 } });

            let quorumCommitted = false;
            const results: Array<{ label: string; startedAfterQuorum: boolean; amount: bigint; rail: 'BREB' | 'ACH'; outcome: string; transferId?: string }> =
              [];
            const sendOnce = (label: string, amount: bigint, rail: 'BREB' | 'ACH') =>
              c.actor(label, async () => {
                await c.point('send');
                const startedAfterQuorum = quorumCommitted;
                const input =
                  rail === 'BREB'
                    ? { brebKey: { type: 'PHONE', value: KEY.keyValue }, targetName: KEY.recipient.fullName, targetDocument: KEY.recipient.idValue }
                    : {
                        bankAccount: {
                          bankId: 1,
                          accountTypeId: 20,
                          accountNumber: '12345678901',
                          documentTypeId: 1,
                          documentNumber: '1020304050',
                          holderFirstName: 'Ana',
                          holderLastName: 'Pérez',
                          bankName: 'Bancolombia',
                          bankAchCode: '1007',
                        },
                      };
                const outcome = await uc!.send.execute({ companyId: co.id }, { amount, ...input, company: co.profile, requestHash: randomUUID() }).then(
                  (r) => ({ outcome: r.transfer.state, transferId: r.transfer.id }),
                  (e: unknown) => ({ outcome: (e as AppError).code ?? String(e) }),
                );
                results.push({ label, startedAfterQuorum, amount, rail, ...outcome });
              });
            void c.actor('second admin', async () => {
              await c.point('sign');
              const signed = await policies.sign.execute(co.id, admin(3), { id: v2.policy.id });
              expect(signed.status).toBe('APPROVED');
              quorumCommitted = true;
            });
            void sendOnce('send-1', amounts[0], 'BREB');
            void sendOnce('send-2', amounts[1], secondRail);
            await c.finish();

            const compiled = { 1: new CompiledPolicy(1, policyOf(V1)), 2: new CompiledPolicy(2, policyOf(V2)) };
            for (const r of results) {
              if (r.outcome === 'POLICY_REFUSED') {
                // Only version 2 refuses (ACH), and a refusal records nothing.
                expect(r.rail).toBe('ACH');
                expect(r.transferId).toBeUndefined();
                seen.add('refused by v2');
                continue;
              }
              const [row] = await h.transfer!.db.query<{ policy_decision: PolicyDecision; state: string; approval_threshold: number | null }>(
                'select policy_decision, state, approval_threshold from transfer.transfers where id = ?::uuid',
                [r.transferId!],
              );
              const d = row!.policy_decision;
              expect([1, 2]).toContain(d.policyVersion);
              // The recorded decision is the one its version makes for this payment.
              const expected = compiled[d.policyVersion as 1 | 2].decide({ amount: r.amount, rail: r.rail, counterparty: null, at: new Date() });
              expect(d).toEqual(expected);
              if (d.action === 'REQUIRE_APPROVALS') expect([row!.state, row!.approval_threshold]).toEqual(['AWAITING_APPROVAL', 2]);
              else expect(row!.state).not.toBe('AWAITING_APPROVAL');
              if (r.startedAfterQuorum) expect(d.policyVersion).toBe(2);
              seen.add(`v${d.policyVersion} ${d.action}`);
            }
            expect(await approvalViolations(h.tdb.url, co.id)).toEqual([]);
          },
        ),
        {
          numRuns: RUNS,
          ...(process.env.INTERLEAVING_SEED ? { seed: Number(process.env.INTERLEAVING_SEED) } : {}),
          endOnFailure: true,
        },
      );
    } finally {
      ledgerReal.close();
    }
    // The exploration reached both versions (otherwise it proved little).
    expect([...seen].some((x) => x.startsWith('v1'))).toBe(true);
    expect([...seen].some((x) => x.startsWith('v2') || x === 'refused by v2')).toBe(true);
    await expectLedgerOk(h);
  }, 300_000);
});
