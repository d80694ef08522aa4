import pg from 'pg';
import { AppError, SqlReturnStore, createLogger, devMeshTls, type ReturnRecord } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { checkInvariants, violationLines } from '@wallet/invariants';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { depositDeps } from '../../src/app/deps.js';
import type { LedgerPort } from '../../src/app/ports.js';
import { PSE_RETURNS, pseReturns } from '../../src/app/returns.js';
import { SqlDepositStore } from '../../src/persistence/deposit.store.js';
import { failure, payer, startHarness, type Harness } from './harness.js';

/**
 * Refunds (devoluciones) of paid PSE deposits (docs/returns.md): all or part of a credited PSE payment
 * refunded to its payer by the PSE provider, from the ACH wallet; several within the gross; the
 * provider's refusal released; the provider down left PENDING and finished by the sweeper; another
 * company's deposit not found; the ledger's and the cross-service invariants after each.
 */
describe('refunds of paid PSE deposits', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.sandboxPost('/sandbox/faults', { pse: 'up' }).catch(() => undefined);
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  /** A PSE deposit of `amountCents`, paid and credited (ASSIGNED). */
  const paid = async (co: string, amountCents: bigint) => {
    const d = await h.client.createPseDeposit(payer({ amountCents }), h.ctx(co));
    expect((await h.sandboxPost(`/sandbox/pse/${d.id}/pay`, { outcome: 'APPROVED', payerBank: 'Bancolombia' })).status).toBeLessThan(300);
    return eventually(async () => {
      const x = await h.client.getDeposit({ id: d.id }, h.ctx(co));
      return x.status === 'ASSIGNED' ? x : undefined;
    }, 15_000);
  };
  const create = (co: string | undefined, depositId: string, over: { amountCents?: bigint; reason?: string } = {}) =>
    h.client.createDepositReturn({ depositId, reason: 'CUSTOMER_REQUEST', requestedBy: '', ...over }, h.ctx(co));

  it('refunds part of a payment, then the rest, from the ACH wallet; more is refused', async () => {
    const co = await h.newCompany();
    const d = await paid(co, 100_000n);
    const before = await h.achAvailable(co);
    const a = await create(co, d.id, { amountCents: 40_000n, reason: 'DUPLICATE' });
    expect(a).toMatchObject({
      depositId: d.id,
      rail: 'PSE',
      amountCents: 40_000n,
      status: 'RETURNED',
      depositAmountCents: 100_000n,
      returnedAmountCents: 40_000n,
    });
    expect(a.returnedAt).toBeInstanceOf(Date);
    expect(await h.achAvailable(co)).toBe(before - 40_000n);
    const rest = await failure(create(co, d.id));
    // What is left of the gross is more than the wallet holds (the fee came out of the credit): refused, nothing moved.
    expect(rest.code).toBe('INSUFFICIENT_BALANCE');
    const left = await h.achAvailable(co);
    const b = await create(co, d.id, { amountCents: left });
    expect(b).toMatchObject({ status: 'RETURNED', returnedAmountCents: 40_000n + left });
    expect((await failure(create(co, d.id, { amountCents: 100_000n }))).code).toBe('RETURN_EXCEEDS_PAYMENT');
    const listed = await h.client.listDepositReturns({ depositId: d.id }, h.ctx(co));
    expect(listed.items.map((r) => r.status)).toEqual(['RETURNED', 'FAILED', 'RETURNED']);
    const m = await h.ledger.db.query<{ type: string; rail: string; wallet_rail: string; status: string }>(
      `select type, rail, wallet_rail, status from ledger.movements where id = ?::uuid`,
      [a.transactionId],
    );
    expect(m).toEqual([{ type: 'TRANSFER_OUT', rail: 'PSE', wallet_rail: 'ACH', status: 'COMPLETED' }]);
    const subjects = (
      await h.deposit.db.query<{ subject: string }>(`select subject from pse_deposit.outbox where payload #>> '{depositReturn,depositId}' = ? order by seq`, [
        d.id,
      ])
    ).map((r) => r.subject);
    expect(subjects).toEqual(['deposit.returned', 'deposit.return_failed', 'deposit.returned']);
  });

  it("another company's deposit and an unpaid one cannot be refunded", async () => {
    const co = await h.newCompany();
    const d = await paid(co, 20_000n);
    expect((await failure(create(await h.newCompany(), d.id))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await failure(h.client.listDepositReturns({ depositId: d.id }, h.ctx(await h.newCompany())))).code).toBe('DEPOSIT_NOT_FOUND');
    const pending = await h.client.createPseDeposit(payer({ amountCents: 20_000n }), h.ctx(co));
    expect((await failure(create(co, pending.id))).code).toBe('INVALID_STATE_TRANSITION');
  });

  it('the provider down: PENDING with the funds held; the sweeper finishes it when it is back', async () => {
    const co = await h.newCompany();
    const d = await paid(co, 50_000n);
    const before = await h.achAvailable(co);
    await h.sandboxPost('/sandbox/faults', { pse: 'down' });
    const r = await create(co, d.id, { amountCents: 10_000n });
    expect(r).toMatchObject({ status: 'PENDING' });
    expect(await h.achAvailable(co)).toBe(before - 10_000n);
    await h.sandboxPost('/sandbox/faults', { pse: 'up' });
    const done = await eventually(async () => {
      const [x] = (await h.client.listDepositReturns({ depositId: d.id }, h.ctx(co))).items;
      return x?.status === 'RETURNED' ? x : undefined;
    }, 30_000);
    expect(done.amountCents).toBe(10_000n);
  });

  describe("the ledger refusing to close a refund's hold", () => {
    /** The cross-service checks of this service's deposits, refunds and exceptions for one company (the checker's read-only roles). */
    const violations = async (co: string) => {
      const client = new pg.Client({ connectionString: h.tdb.url });
      await client.connect();
      try {
        return violationLines(await checkInvariants(client, { companyId: co, only: ['deposits', 'exceptions'], rail: 'none', partial: true }));
      } finally {
        await client.end();
      }
    };
    const exceptionsOf = async (returnId: string) =>
      (await h.client.listExceptions({ kind: 'RETURN_CLOSE_REFUSED', limit: 100 }, h.ctx())).items.filter((e) => e.resourceId === returnId);

    it('a refund the provider refused whose release the ledger refuses: parked with exactly one RETURN_CLOSE_REFUSED exception, never a second; resolved by dismiss', async () => {
      const co = await h.newCompany();
      const d = await paid(co, 60_000n);
      const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('pse-deposit'));
      try {
        // The provider refuses the refund; the hold was closed the other way (committed) behind the saga's back before its release.
        const ledger = Object.assign(Object.create(ledgerReal) as LedgerPort, {
          releaseReturn: async (r: ReturnRecord, message: string) => {
            await h.ledgerClient.commitReturn({ idempotencyKey: `test:${r.id}:closed-elsewhere`, holdId: r.holdId! }, h.ctx(co));
            return ledgerReal.releaseReturn(r, message);
          },
        });
        const deps = depositDeps({
          store: new SqlDepositStore(h.deposit.db),
          returns: new SqlReturnStore(h.deposit.db, PSE_RETURNS),
          ledger,
          pse: {
            createLink: () => Promise.reject(new AppError('PSE_PROVIDER_NOT_CONFIGURED')),
            refund: async () => ({ outcome: 'REFUSED', returnedAt: null, code: 'NOT_PAID' }),
          },
          mailer: { send: async () => ({ messageId: 'none' }) },
          settings: {
            inflowEnabled: true,
            linkTtlSeconds: 3600,
            paidGraceSeconds: 0,
            callbackUrl: 'http://127.0.0.1:1/cb',
            callbackSecret: 'x',
            sweeperGraceSeconds: 1,
          },
          log: createLogger('pse-refunds', process.env.TEST_LOG_LEVEL ?? 'silent'),
        });
        const uc = pseReturns(deps);
        const r = await uc.create.execute(co, { depositId: d.id, amountCents: 20_000n, reason: 'DUPLICATE', requestedBy: 'test' });
        expect(r).toMatchObject({ status: 'RELEASING', parked: true });
        const [exc, ...more] = await exceptionsOf(r.id);
        expect(more).toEqual([]);
        expect(exc).toMatchObject({ kind: 'RETURN_CLOSE_REFUSED', status: 'OPEN', rail: 'PSE', companyId: co, actions: ['retry', 'dismiss'] });
        expect(exc!.movement).toBeUndefined();
        expect(JSON.parse(exc!.oursJson)).toMatchObject({ state: 'RELEASING', step: 'release', railOutcome: 'REFUSED', depositId: d.id, amount: '20000' });
        // The exception is about a refund that exists, and the parked refund has its exception: no violation.
        expect(await violations(co)).toEqual([]);

        // Run again (the release refused again): parked again, still one exception.
        expect(await uc.saga.resume(r.id)).toMatchObject({ status: 'RELEASING', parked: true });
        expect((await exceptionsOf(r.id)).map((e) => e.id)).toEqual([exc!.id]);
        expect(await h.deposit.db.query(`select 1 from pse_deposit.money_exceptions where resource_id = ?`, [r.id])).toHaveLength(1);

        // The operator's retry through the service: refused again, the exception open again; then dismissed with a note.
        expect((await failure(h.client.resolveException({ id: exc!.id, action: 'retry', note: 'reintento', resolvedBy: 'operator:op-1' }, h.ctx()))).code).toBe(
          'SERVICE_UNAVAILABLE',
        );
        expect((await exceptionsOf(r.id)).map((e) => e.status)).toEqual(['OPEN']);
        const done = await h.client.resolveException(
          { id: exc!.id, action: 'dismiss', note: 'El libro cerró la retención con un asiento de corrección', resolvedBy: 'operator:op-1' },
          h.ctx(),
        );
        expect(done).toMatchObject({ status: 'RESOLVED', action: 'dismiss' });
        expect(await violations(co)).toEqual([]);
      } finally {
        ledgerReal.close();
      }
    });

    it('a refund parked without its exception is reported by the checker', async () => {
      const co = await h.newCompany();
      const d = await paid(co, 30_000n);
      const r = await create(co, d.id, { amountCents: 5_000n });
      expect(r.status).toBe('RETURNED');
      await h.deposit.db.query(`update pse_deposit.deposit_returns set parked = true where id = ?`, [r.id]);
      try {
        expect(await violations(co)).toEqual([
          `[deposits] return ${r.id} of deposit ${d.id} (company ${co}) RETURNED: is parked for an operator, but no RETURN_CLOSE_REFUSED money exception says so`,
        ]);
      } finally {
        await h.deposit.db.query(`update pse_deposit.deposit_returns set parked = false where id = ?`, [r.id]);
      }
    });
  });
});
