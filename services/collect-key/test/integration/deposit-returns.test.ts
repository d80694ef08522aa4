import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { AppError, SqlReturnStore, createLogger, devMeshTls, newReturnId, type ReturnRecord, type ReturnStore } from '@wallet/platform';
import { Choreography, eventually } from '@wallet/platform/testing';
import { collectKeyDeps } from '../../src/app/deps.js';
import type { BrebDirectory, LedgerPort } from '../../src/app/ports.js';
import { SqlCollectKeyStore } from '../../src/persistence/collect-key.store.js';
import { COLLECT_KEY_RETURNS, collectKeyReturns } from '../../src/app/returns.js';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { ledgerV1 } from '@wallet/proto';
import { ZERO_FEE } from '../../src/app/ports.js';
import { Rail, failure, startHarness, type Harness } from './harness.js';

/**
 * Returns (devoluciones) of credited Bre-B payments (docs/returns.md): all or part of an ASSIGNED
 * payment back to its payer through the network, several times within its gross; the hold on the
 * BREB wallet, the network's return, the commit to breb_settlement; the release when the network
 * refuses; the sweeper finishing what a call left; and the saga's writers racing.
 */
describe('returns of credited Bre-B payments', () => {
  let h: Harness;
  /** The service's sweeper settings and a Bre-B network whose returns go to the sandbox: what the sagas built here run with. */
  const settings = { incomingCallbackUrl: 'http://127.0.0.1/cb', callbackSecret: 'x', merchantName: 'M', merchantCity: 'BOGOTA', sweeperGraceSeconds: 0 };
  const network: BrebDirectory = {
    register: async () => ({ outcome: 'UNAVAILABLE', anchorHandle: null }),
    unregister: async () => undefined,
    returnPayment: async (r) => {
      const res = await h.sandboxPost('/breb/network/returns', { ...r, amountCents: Number(r.amountCents) });
      return res.status < 300
        ? { outcome: 'RETURNED', returnedAt: new Date(String(res.body.returnedAt)) }
        : { outcome: 'REFUSED', returnedAt: null, code: String(res.body.error) };
    },
  };
  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.sandboxPost('/sandbox/faults', { brebRail: 'up' }).catch(() => undefined);
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
    await expectReturnsHoldTheirHolds();
  });

  /**
   * Across services: a live return (once reserved) has an open hold; a RETURNED one a committed hold; a FAILED one none open.
   * A parked one is a contradiction left for an operator (its money exception says so).
   */
  async function expectReturnsHoldTheirHolds(): Promise<void> {
    const returns = await h.service.db.query<{ id: string; status: string; hold_id: string | null; parked: boolean }>(
      `select id, status, hold_id::text as hold_id, parked from collect_key.payment_returns`,
    );
    const holds = new Map(
      (await h.ledger.db.query<{ id: string; status: string }>(`select id::text as id, status from ledger.holds where return_of is not null`)).map((x) => [
        x.id,
        x.status,
      ]),
    );
    const wrong: string[] = [];
    for (const r of returns) {
      const hold = r.hold_id ? holds.get(r.hold_id) : undefined;
      const ok =
        r.parked || r.status === 'RESERVING'
          ? true
          : r.status === 'SENDING' || r.status === 'RELEASING'
            ? hold === 'OPEN'
            : r.status === 'RETURNED'
              ? hold === 'COMMITTED'
              : hold === undefined || hold === 'RELEASED';
      if (!ok) wrong.push(`${r.id} ${r.status} hold ${r.hold_id ?? '-'} ${hold ?? 'missing'}`);
    }
    expect(wrong).toEqual([]);
  }

  /** A credited (ASSIGNED) Bre-B payment of `amountCents` to a new key of the company. */
  const credited = async (co: string, externalId: string, amountCents: number) => {
    const k = (await h.client.createKey({ externalId, name: 'Tienda' }, h.ctx(co))).key!;
    const r = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue: k.keyValue,
      amountCents,
      payerName: 'Sara Gil',
      payerDocument: 'CC 5060',
      payerBank: 'Nequi',
    });
    const transfer = String(r.body.providerTransferId);
    const row = await eventually(
      async () =>
        (
          await h.service.db.query<{ deposit_id: string }>(
            `select deposit_id from collect_key.payments where provider_transfer_id = ? and status = 'ASSIGNED'`,
            [transfer],
          )
        )[0],
      15_000,
    );
    return { transfer, depositId: row.deposit_id };
  };
  const create = (co: string | undefined, depositId: string, over: { amountCents?: bigint; reason?: string; description?: string } = {}) =>
    h.client.createDepositReturn({ depositId, reason: 'CUSTOMER_REQUEST', requestedBy: '', ...over }, h.ctx(co));

  it('returns part of a payment, then the rest; a third is over the gross; the wallet pays, the network reports each', async () => {
    const co = await h.newCompany();
    const p = await credited(co, 'dev-1', 50_000);
    const before = await h.brebAvailable(co);
    const a = await create(co, p.depositId, { amountCents: 20_000n, reason: 'OVERPAYMENT', description: 'Pagó de más' });
    expect(a).toMatchObject({
      depositId: p.depositId,
      rail: 'BREB',
      amountCents: 20_000n,
      reason: 'OVERPAYMENT',
      description: 'Pagó de más',
      status: 'RETURNED',
      depositAmountCents: 50_000n,
      returnedAmountCents: 20_000n,
    });
    expect(a.id).toMatch(/^ret_[a-z0-9]{24}$/);
    expect(a.returnedAt).toBeInstanceOf(Date);
    expect(await h.brebAvailable(co)).toBe(before - 20_000n);

    // Without an amount: what is left.
    const b = await create(co, p.depositId);
    expect(b).toMatchObject({ amountCents: 30_000n, status: 'RETURNED', returnedAmountCents: 50_000n });
    const over = await failure(create(co, p.depositId, { amountCents: 1n }));
    expect(over.code).toBe('RETURN_EXCEEDS_PAYMENT');
    expect(over.details).toEqual({ grossCents: '50000', returnedCents: '50000', returnableCents: '0' });

    const listed = await h.client.listDepositReturns({ depositId: p.depositId }, h.ctx(co));
    expect(listed.items.map((x) => [x.id, x.status, x.amountCents])).toEqual([
      [a.id, 'RETURNED', 20_000n],
      [b.id, 'RETURNED', 30_000n],
    ]);
    // The movement the wallet shows: a TRANSFER_OUT on BREB, completed, for the payer.
    const m = await h.ledger.db.query<{ type: string; rail: string; status: string; reference: string }>(
      `select type, rail, status, reference from ledger.movements where id = ?::uuid`,
      [a.transactionId],
    );
    expect(m).toEqual([{ type: 'TRANSFER_OUT', rail: 'BREB', status: 'COMPLETED', reference: a.id }]);
    const subjects = (
      await h.service.db.query<{ subject: string }>(`select subject from collect_key.outbox where payload #>> '{depositReturn,depositId}' = ? order by seq`, [
        p.depositId,
      ])
    ).map((r) => r.subject);
    expect(subjects).toEqual(['deposit.returned', 'deposit.returned']);
  });

  it("another company's payment is not found; bad input and a held payment are refused", async () => {
    const co = await h.newCompany();
    const p = await credited(co, 'dev-2', 10_000);
    expect((await failure(create(await h.newCompany(), p.depositId))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await h.client.listDepositReturns({ depositId: p.depositId }, h.ctx(co))).items).toEqual([]);
    expect((await failure(h.client.listDepositReturns({ depositId: p.depositId }, h.ctx(await h.newCompany())))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await failure(create(co, 'dep_nope'))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await failure(create(co, p.depositId, { reason: 'WHIM' }))).code).toBe('INVALID_REQUEST');
    expect((await failure(create(co, p.depositId, { amountCents: 0n }))).code).toBe('INVALID_REQUEST');
    expect((await failure(create(co, p.depositId, { description: 'x'.repeat(141) }))).code).toBe('INVALID_REQUEST');
    expect((await failure(create(co, p.depositId, { amountCents: 10_001n }))).code).toBe('RETURN_EXCEEDS_PAYMENT');
  });

  it('a wallet that cannot cover the return: 422 INSUFFICIENT_BALANCE, the return FAILED, nothing moved', async () => {
    const co = await h.newCompany();
    const p = await credited(co, 'dev-3', 10_000);
    // The company spent most of it (a send, as the transfer service books one).
    const spend = await h.ledgerClient.reserve(
      {
        idempotencyKey: `spend-${p.depositId}`,
        rail: Rail.BREB,
        amount: 7_000n,
        fee: ZERO_FEE,
        movement: { id: randomUUID(), status: ledgerV1.MovementStatus.PENDING },
      },
      h.ctx(co),
    );
    await h.ledgerClient.commit({ idempotencyKey: `spent-${p.depositId}`, holdId: spend.hold!.id }, h.ctx(co));
    const available = await h.brebAvailable(co);
    expect(available).toBeLessThan(10_000n);
    const err = await failure(create(co, p.depositId, { amountCents: 10_000n }));
    expect(err.code).toBe('INSUFFICIENT_BALANCE');
    const [r] = (await h.client.listDepositReturns({ depositId: p.depositId }, h.ctx(co))).items;
    expect(r).toMatchObject({ status: 'FAILED', failureCode: 'INSUFFICIENT_BALANCE', returnedAmountCents: 0n });
    expect(err.details).toEqual({ returnId: r!.id });
    expect(await h.brebAvailable(co)).toBe(available);
    // What the wallet can cover still goes back.
    expect(await create(co, p.depositId, { amountCents: available })).toMatchObject({ status: 'RETURNED' });
  });

  it('the network unreachable: PENDING with the funds held; the sweeper finishes it once the network is back', async () => {
    const co = await h.newCompany();
    const p = await credited(co, 'dev-4', 30_000);
    const before = await h.brebAvailable(co);
    await h.sandboxPost('/sandbox/faults', { brebRail: 'down' });
    const r = await create(co, p.depositId, { amountCents: 5_000n });
    expect(r).toMatchObject({ status: 'PENDING', returnedAmountCents: 5_000n });
    expect(await h.brebAvailable(co)).toBe(before - 5_000n);
    await h.sandboxPost('/sandbox/faults', { brebRail: 'up' });
    const done = await eventually(async () => {
      const [x] = (await h.client.listDepositReturns({ depositId: p.depositId }, h.ctx(co))).items;
      return x?.status === 'RETURNED' ? x : undefined;
    }, 30_000);
    expect(done.returnedAt).toBeInstanceOf(Date);
    expect(await h.brebAvailable(co)).toBe(before - 5_000n);
  });

  it('the API call and two sweepers racing over one return: the network is asked, the hold committed, the event written once (any interleaving)', async () => {
    const co = await h.newCompany();
    const log = createLogger('ck-returns', process.env.TEST_LOG_LEVEL ?? 'silent');
    const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('collect-key'));
    const plainReturns = new SqlReturnStore(h.service.db, COLLECT_KEY_RETURNS);
    try {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), async (s) => {
          const p = await credited(co, `dev-race-${Math.random().toString(36).slice(2, 10)}`, 20_000);
          const c = new Choreography(s);
          const returns = c.wrap('returns', plainReturns as ReturnStore, ['transition'], false);
          const ledger = c.wrap('ledger', ledgerReal as unknown as LedgerPort, ['reserveReturn', 'commitReturn']);
          const directory = c.wrap('network', network, ['returnPayment']);
          const deps = collectKeyDeps({ store: new SqlCollectKeyStore(h.service.db), returns, ledger, directory, log, settings });
          const saga = collectKeyReturns(deps).saga;
          const inserted = await plainReturns.insert({
            id: newReturnId(),
            depositId: p.depositId,
            companyId: co,
            amount: 7_000n,
            reason: 'DUPLICATE',
            description: null,
            movementId: randomUUID(),
            requestedBy: 'test',
            inflowKey: () => `collectkey:payment:${p.transfer}`,
          });
          if ('refused' in inserted) throw new Error(`not inserted: ${inserted.refused}`);
          const outcomes: string[] = [];
          const run = (who: string, actor: 'company' | 'sweeper') =>
            c.actor(who, async () => {
              await c.point('settle');
              await saga.settle(inserted, actor).then(
                (r) => outcomes.push(r.status),
                (e: unknown) => outcomes.push(e instanceof AppError ? e.code : String(e)),
              );
            });
          void run('api', 'company');
          void run('sweeper-1', 'sweeper');
          void run('sweeper-2', 'sweeper');
          await c.finish();
          expect(outcomes).toHaveLength(3);
          const final = (await plainReturns.byId(inserted.id))!;
          expect(final.status).toBe('RETURNED');
          const events = await h.service.db.query<{ n: number }>(
            `select count(*)::int as n from collect_key.outbox where payload #>> '{depositReturn,id}' = ?`,
            [inserted.id],
          );
          expect(events[0]!.n).toBe(1);
          const postings = await h.ledger.db.query<{ kind: string }>(`select kind from ledger.postings where idempotency_key like ? order by created_at`, [
            `collectkey:return:${inserted.id}:%`,
          ]);
          expect(postings.map((x) => x.kind)).toEqual(['reserve', 'commit']);
        }),
        { numRuns: 6 },
      );
    } finally {
      ledgerReal.close();
    }
  });

  describe("the ledger refusing to close a return's hold", () => {
    const log = createLogger('ck-returns', process.env.TEST_LOG_LEVEL ?? 'silent');
    /** The return saga of this service over the real ledger, whose commit `before` runs ahead of. */
    const sagaWith = (ledgerReal: GrpcLedger, before: (r: ReturnRecord) => Promise<void>) => {
      const ledger = Object.assign(Object.create(ledgerReal) as LedgerPort, {
        commitReturn: async (r: ReturnRecord) => {
          await before(r);
          return ledgerReal.commitReturn(r);
        },
      });
      const deps = collectKeyDeps({
        store: new SqlCollectKeyStore(h.service.db),
        returns: new SqlReturnStore(h.service.db, COLLECT_KEY_RETURNS),
        ledger,
        directory: network,
        log,
        settings,
      });
      return collectKeyReturns(deps);
    };
    const exceptionsOf = async (returnId: string) =>
      (await h.client.listExceptions({ kind: 'RETURN_CLOSE_REFUSED', limit: 100 }, h.ctx())).items.filter((e) => e.resourceId === returnId);

    it('parks it with exactly one RETURN_CLOSE_REFUSED exception, listed for operators; a repeat park opens no second; a retry refused again reopens it; dismissed', async () => {
      const co = await h.newCompany();
      const p = await credited(co, 'dev-park', 20_000);
      const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('collect-key'));
      try {
        // The hold is released behind the saga's back (closed the other way) before its commit: the ledger refuses the commit.
        const uc = sagaWith(ledgerReal, async (r) => {
          await h.ledgerClient.releaseReturn(
            { idempotencyKey: `test:${r.id}:closed-elsewhere`, holdId: r.holdId!, errorMessage: 'cerrada por fuera' },
            h.ctx(co),
          );
        });
        const r = await uc.create.execute(co, { depositId: p.depositId, amountCents: 7_000n, reason: 'DUPLICATE', requestedBy: 'test' });
        expect(r).toMatchObject({ status: 'SENDING', parked: true });
        const [exc, ...more] = await exceptionsOf(r.id);
        expect(more).toEqual([]);
        expect(exc).toMatchObject({ kind: 'RETURN_CLOSE_REFUSED', status: 'OPEN', rail: 'BREB', companyId: co, actions: ['retry', 'dismiss'] });
        expect(JSON.parse(exc!.oursJson)).toMatchObject({ state: 'SENDING', step: 'commit', railOutcome: 'RETURNED', depositId: p.depositId, amount: '7000' });
        expect(JSON.parse(exc!.theirsJson)).toMatchObject({ source: 'ledger', code: expect.any(String) });

        // Parked again (the saga run once more: the commit is refused again): still one exception.
        expect(await uc.saga.resume(r.id)).toMatchObject({ status: 'SENDING', parked: true });
        expect((await exceptionsOf(r.id)).map((e) => e.id)).toEqual([exc!.id]);

        // The operator's retry (the service's own saga and ledger): refused again, nothing moved; the exception is open again.
        const again = await failure(h.client.resolveException({ id: exc!.id, action: 'retry', note: 'reintento', resolvedBy: 'operator:op-1' }, h.ctx()));
        expect(again.code).toBe('SERVICE_UNAVAILABLE');
        expect((await exceptionsOf(r.id)).map((e) => [e.id, e.status])).toEqual([[exc!.id, 'OPEN']]);
        const done = await h.client.resolveException(
          { id: exc!.id, action: 'dismiss', note: 'La retención se cerró por corrección manual', resolvedBy: 'operator:op-1' },
          h.ctx(),
        );
        expect(done).toMatchObject({ status: 'RESOLVED', action: 'dismiss', resolvedBy: 'operator:op-1' });
        expect(await h.service.db.query<{ parked: boolean }>(`select parked from collect_key.payment_returns where id = ?`, [r.id])).toEqual([
          { parked: true },
        ]);
      } finally {
        ledgerReal.close();
      }
    });

    it("an operator's retry once the cause is gone: the return is committed once and RETURNED, its exception RESOLVED", async () => {
      const co = await h.newCompany();
      const p = await credited(co, 'dev-park-2', 20_000);
      const ledgerReal = new GrpcLedger(h.ledger.address, devMeshTls('collect-key'));
      try {
        // The ledger answers the commit with a refusal once (as it would for a hold it does not find), and moves nothing.
        const uc = sagaWith(ledgerReal, async () => {
          throw new AppError('HOLD_NOT_FOUND');
        });
        const r = await uc.create.execute(co, { depositId: p.depositId, amountCents: 5_000n, reason: 'OVERPAYMENT', requestedBy: 'test' });
        expect(r).toMatchObject({ status: 'SENDING', parked: true });
        const [exc] = await exceptionsOf(r.id);
        expect(exc).toMatchObject({ status: 'OPEN', kind: 'RETURN_CLOSE_REFUSED' });
        const done = await h.client.resolveException({ id: exc!.id, action: 'retry', note: 'libro corregido', resolvedBy: 'operator:op-2' }, h.ctx());
        expect(done).toMatchObject({ status: 'RESOLVED', action: 'retry' });
        const [after] = (await h.client.listDepositReturns({ depositId: p.depositId }, h.ctx(co))).items;
        expect(after).toMatchObject({ id: r.id, status: 'RETURNED' });
        const postings = await h.ledger.db.query<{ kind: string }>(`select kind from ledger.postings where idempotency_key like ? order by created_at`, [
          `collectkey:return:${r.id}:%`,
        ]);
        expect(postings.map((x) => x.kind)).toEqual(['reserve', 'commit']);
        const events = await h.service.db.query<{ n: number }>(
          `select count(*)::int as n from collect_key.outbox where subject = 'deposit.returned' and payload #>> '{depositReturn,id}' = ?`,
          [r.id],
        );
        expect(events[0]!.n).toBe(1);
        // Resolved: a second resolution is refused.
        expect((await failure(h.client.resolveException({ id: exc!.id, action: 'retry', note: 'otra', resolvedBy: 'operator:op-2' }, h.ctx()))).code).toBe(
          'EXCEPTION_NOT_OPEN',
        );
      } finally {
        ledgerReal.close();
      }
    });
  });
});
