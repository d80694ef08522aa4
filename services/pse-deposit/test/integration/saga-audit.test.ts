import { randomUUID } from 'node:crypto';
import { AppError, metricsRegistry } from '@wallet/platform';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import type { LedgerPort } from '../../src/app/ports.js';
import { depositViolations } from './deposit-invariants.js';
import { Rail, failure, startHarness, type Harness } from './harness.js';
import { GRACE_SECONDS, buildRig, newDeposit, signedCallback, type CallbackBody, type Rig } from './rig.js';
import { devMeshTls } from '@wallet/platform';

/**
 * The audit's findings on the PSE deposit saga (callback PAID vs expiry vs provider REVERSED vs the
 * sweeper; CONTRACT §10), each replayed step by step on real Postgres and the real ledger over gRPC.
 * The use cases are wired by hand (rig.ts) with PSE_PAID_GRACE_SECONDS 60; operators' resolutions go
 * through the running service's gRPC (same database, same ledger).
 */
describe('PSE deposit saga: the audit findings', () => {
  let h: Harness;
  let ledger: GrpcLedger;
  let rig: Rig;
  beforeAll(async () => {
    h = await startHarness({ depositEnv: { SWEEPER_INTERVAL_MS: '3600000', PSE_PAID_GRACE_SECONDS: String(GRACE_SECONDS) } });
    ledger = new GrpcLedger(h.ledger.address, devMeshTls('pse-deposit'));
    rig = buildRig(h, { ledger, replicas: 2 });
  }, 60_000);
  afterAll(async () => {
    ledger?.close();
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const NET = 98_810n;
  const callback = (id: string, b: CallbackBody) => rig.uc.handlePseCallback.execute(signedCallback(id, b));
  const stored = async (id: string) =>
    (await h.deposit.db.query<{ status: string; step_at: Date | null }>(`select status, step_at from pse_deposit.deposits where id = ?`, [id]))[0]!;
  const shown = async (co: string, id: string) => (await h.client.getDeposit({ id }, h.ctx(co))).status;
  const outbox = async (id: string) =>
    (await h.deposit.db.query<{ subject: string }>(`select subject from pse_deposit.outbox where payload->'deposit'->>'id' = ? order by seq`, [id])).map(
      (r) => r.subject,
    );
  const exceptionsOf = (id: string) =>
    h.deposit.db.query<{ id: string; kind: string; status: string; ours: Record<string, unknown>; theirs: Record<string, unknown> }>(
      `select id, kind, status, ours, theirs from pse_deposit.money_exceptions where resource_id = ? order by opened_at`,
      [id],
    );
  const clean = async (co: string) => expect((await depositViolations(h.deposit.db, h.tdb.url, co, { settled: true })).violations).toEqual([]);
  const sweepBoth = () => Promise.all(rig.sweepers.map((s) => s.tick()));

  it('a link is shown EXPIRED from expiresAt, before the sweeper moves it; the sweeper expires it at expiresAt (not + grace), once across replicas', async () => {
    const co = await h.newCompany();
    const due = await newDeposit(h, rig, co, -1_000);
    const open = await newDeposit(h, rig, co, 30_000);
    // Not swept yet: stored PENDING_CONFIRM, shown EXPIRED (get and both listing styles, filters included).
    expect((await stored(due.id)).status).toBe('PENDING_CONFIRM');
    expect(await shown(co, due.id)).toBe('EXPIRED');
    expect(await shown(co, open.id)).toBe('PENDING_CONFIRM');
    const page = await h.client.listDeposits({ page: 0, limit: 10, cursorMode: false }, h.ctx(co));
    expect(Object.fromEntries(page.deposits.map((d) => [d.id, d.status]))).toEqual({ [due.id]: 'EXPIRED', [open.id]: 'PENDING_CONFIRM' });
    const ids = async (status: string, cursorMode: boolean) =>
      (await h.client.listDeposits({ status, page: 0, limit: 10, cursorMode }, h.ctx(co))).deposits.map((d) => d.id);
    expect(await ids('EXPIRED', false)).toEqual([due.id]);
    expect(await ids('EXPIRED', true)).toEqual([due.id]);
    expect(await ids('PENDING_CONFIRM', true)).toEqual([open.id]);
    expect((await h.client.listDeposits({ status: 'PENDING_CONFIRM', page: 0, limit: 10, cursorMode: false }, h.ctx(co))).total).toBe(1);
    expect((await failure(h.client.shareByEmail({ depositId: due.id, recipientEmail: 'a@example.com' }, h.ctx(co)))).code).toBe('DEPOSIT_NOT_PENDING');

    // Two sweeper replicas at once: the link is expired exactly once; the open one is left alone.
    await sweepBoth();
    await sweepBoth();
    expect((await stored(due.id)).status).toBe('EXPIRED');
    expect((await stored(open.id)).status).toBe('PENDING_CONFIRM');
    expect(await outbox(due.id)).toEqual(['deposit.created', 'deposit.expired']);
    expect(await outbox(open.id)).toEqual(['deposit.created']);
    await clean(co);
  });

  it('a payment made in time but confirmed after the link expired moves EXPIRED → ASSIGNED, credited once (deposit.expired, then deposit.paid)', async () => {
    const co = await h.newCompany();
    const d = await newDeposit(h, rig, co, -30_000);
    await sweepBoth();
    expect(await shown(co, d.id)).toBe('EXPIRED');
    const eventId = `evt-${randomUUID()}`;
    // paidAt 20 s after expiresAt: inside PSE_PAID_GRACE_SECONDS (60).
    const body: CallbackBody = { eventId, status: 'PAID', paidAt: new Date(d.expiresAt!.getTime() + 20_000), payerBank: 'Nequi' };
    expect(await callback(d.id, body)).toEqual({ accepted: true, duplicate: false });
    expect(await shown(co, d.id)).toBe('ASSIGNED');
    expect(await h.achAvailable(co)).toBe(NET);
    // The same delivery again, and the same payment under a new event id: repeats.
    expect(await callback(d.id, body)).toEqual({ accepted: true, duplicate: true });
    expect(await callback(d.id, { ...body, eventId: `evt-${randomUUID()}` })).toEqual({ accepted: true, duplicate: true });
    expect(await h.achAvailable(co)).toBe(NET);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.expired', 'deposit.paid']);
    const got = await h.client.getDeposit({ id: d.id }, h.ctx(co));
    expect(got).toMatchObject({ status: 'ASSIGNED', payerBank: 'Nequi', providerTransferId: `pse-${d.id}` });
    expect(await exceptionsOf(d.id)).toEqual([]);
    await clean(co);
  });

  it('an in-time PAID that finds the link still pending past expiresAt expires it first, then credits it (what clients saw, in order)', async () => {
    const co = await h.newCompany();
    const d = await newDeposit(h, rig, co, -5_000);
    expect(await callback(d.id, { status: 'PAID', paidAt: new Date(d.expiresAt!.getTime() - 10_000) })).toEqual({ accepted: true, duplicate: false });
    expect(await shown(co, d.id)).toBe('ASSIGNED');
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.expired', 'deposit.paid']);
    await sweepBoth();
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.expired', 'deposit.paid']);
    await clean(co);
  });

  it('the expiry sweepers racing in-time PAID callbacks: every link expired at most once, every payment credited once', async () => {
    const co = await h.newCompany();
    const ds = await Promise.all(Array.from({ length: 6 }, () => newDeposit(h, rig, co, -2_000)));
    await Promise.all([sweepBoth(), ...ds.map((d) => callback(d.id, { status: 'PAID', paidAt: new Date(d.expiresAt!.getTime() + 1_000) })), sweepBoth()]);
    for (const d of ds) {
      expect(await shown(co, d.id)).toBe('ASSIGNED');
      const subjects = await outbox(d.id);
      expect(subjects.filter((s) => s === 'deposit.paid')).toHaveLength(1);
      expect(subjects.filter((s) => s === 'deposit.expired').length).toBeLessThanOrEqual(1);
    }
    expect(await h.achAvailable(co)).toBe(NET * 6n);
    await clean(co);
  });

  it('a PAID whose paidAt is after expiresAt + grace is a money exception, never credited on its own; an operator may credit it, once', async () => {
    const co = await h.newCompany();
    const d = await newDeposit(h, rig, co, -600_000);
    await sweepBoth();
    const paidAt = new Date(d.expiresAt!.getTime() + (GRACE_SECONDS + 60) * 1000);
    const eventId = `evt-${randomUUID()}`;
    expect(await callback(d.id, { eventId, status: 'PAID', paidAt, payerBank: 'Davivienda', providerTransferId: 'pse-late-1' })).toEqual({
      accepted: true,
      duplicate: true,
    });
    expect(await shown(co, d.id)).toBe('EXPIRED');
    expect(await h.achAvailable(co)).toBe(0n);
    const [exc] = await exceptionsOf(d.id);
    expect(exc).toMatchObject({
      kind: 'PAID_AFTER_EXPIRY',
      status: 'OPEN',
      ours: { state: 'EXPIRED', status: 'EXPIRED', expiresAt: d.expiresAt!.toISOString(), paidGraceSeconds: GRACE_SECONDS },
      theirs: { source: 'callback', status: 'PAID', eventId, paidAt: paidAt.toISOString(), providerTransferId: 'pse-late-1' },
    });
    // Redelivered: recorded once, the same exception.
    expect(await callback(d.id, { eventId, status: 'PAID', paidAt })).toEqual({ accepted: true, duplicate: true });
    expect(await exceptionsOf(d.id)).toHaveLength(1);
    const gauge = await metricsRegistry.getSingleMetricAsString('wallet_exceptions_open');
    expect(gauge).toMatch(/wallet_exceptions_open\{service="pse-deposit",kind="PAID_AFTER_EXPIRY"\} [1-9]/);

    // The operator accepts it: EXPIRED → CREDITING → ASSIGNED through the table, under the deposit's own ledger key.
    const resolved = await h.client.resolveException(
      { id: exc!.id, action: 'credit', note: 'pago confirmado con el banco', resolvedBy: 'ops@example.com' },
      h.ctx(),
    );
    expect(resolved).toMatchObject({
      id: exc!.id,
      status: 'RESOLVED',
      action: 'credit',
      resolvedBy: 'ops@example.com',
      rail: 'PSE',
      resourceId: d.id,
      actions: ['credit', 'dismiss'],
    });
    expect(await h.client.getDeposit({ id: d.id }, h.ctx(co))).toMatchObject({ status: 'ASSIGNED', providerTransferId: 'pse-late-1', payerBank: 'Davivienda' });
    expect(await h.achAvailable(co)).toBe(NET);
    expect((await failure(h.client.resolveException({ id: exc!.id, action: 'credit', note: 'otra vez', resolvedBy: 'ops' }, h.ctx()))).code).toBe(
      'EXCEPTION_NOT_OPEN',
    );
    // A later in-time PAID of the same payment adds nothing.
    expect(await callback(d.id, { status: 'PAID', paidAt: new Date(d.expiresAt!.getTime() - 1_000) })).toEqual({ accepted: true, duplicate: true });
    expect(await h.achAvailable(co)).toBe(NET);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.expired', 'deposit.paid']);
    await clean(co);
  });

  it('a PAID after FAILED is a money exception; dismiss (with a note) posts nothing', async () => {
    const co = await h.newCompany();
    const d = await newDeposit(h, rig, co, 600_000);
    expect(await callback(d.id, { status: 'FAILED', errorMessage: 'Fondos insuficientes' })).toEqual({ accepted: true, duplicate: false });
    expect(await callback(d.id, { status: 'PAID', paidAt: new Date() })).toEqual({ accepted: true, duplicate: true });
    expect(await shown(co, d.id)).toBe('FAILED');
    const [exc] = await exceptionsOf(d.id);
    expect(exc).toMatchObject({ kind: 'PAID_AFTER_FAILURE', status: 'OPEN', ours: { state: 'FAILED' }, theirs: { status: 'PAID' } });
    const bad = await failure(h.client.resolveException({ id: exc!.id, action: 'write_off', note: '', resolvedBy: 'ops' }, h.ctx()));
    expect(bad.code).toBe('INVALID_REQUEST');
    expect((bad.details!.fields as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(['action', 'note']);
    const done = await h.client.resolveException({ id: exc!.id, action: 'dismiss', note: 'el banco devolvió el pago al pagador', resolvedBy: 'ops' }, h.ctx());
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'dismiss', note: 'el banco devolvió el pago al pagador' });
    expect(done.resolvedAt).toBeInstanceOf(Date);
    expect(await shown(co, d.id)).toBe('FAILED');
    expect(await h.achAvailable(co)).toBe(0n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.failed']);
    await clean(co);
  });

  it('a FAILED after the credit is a money exception; the deposit stays ASSIGNED and credited once', async () => {
    const co = await h.newCompany();
    const d = await newDeposit(h, rig, co, 600_000);
    await callback(d.id, { status: 'PAID', paidAt: new Date() });
    expect(await callback(d.id, { status: 'FAILED' })).toEqual({ accepted: true, duplicate: true });
    expect(await shown(co, d.id)).toBe('ASSIGNED');
    expect(await h.achAvailable(co)).toBe(NET);
    expect((await exceptionsOf(d.id)).map((e) => [e.kind, e.status])).toEqual([['FAILED_AFTER_PAYMENT', 'OPEN']]);
    const listed = await h.client.listExceptions({ kind: 'FAILED_AFTER_PAYMENT', limit: 100 }, h.ctx());
    expect(listed.items.find((e) => e.resourceId === d.id)?.actions).toEqual(['dismiss']);
    await clean(co);
  });

  it('a REVERSED of a deposit never paid: after FAILED an exception at once; past the paying window asked again AND an exception, then applied once the payment is credited', async () => {
    const co = await h.newCompany();
    const failedOne = await newDeposit(h, rig, co, 600_000);
    await callback(failedOne.id, { status: 'FAILED' });
    expect(await callback(failedOne.id, { status: 'REVERSED' })).toEqual({ accepted: true, duplicate: true });
    expect((await exceptionsOf(failedOne.id)).map((e) => e.kind)).toEqual(['REVERSED_WITHOUT_PAYMENT']);
    expect(await shown(co, failedOne.id)).toBe('FAILED');

    // Inside the window (the link open, or expired less than the grace ago) a reversal ahead of its payment is only asked again.
    const early = await newDeposit(h, rig, co, -10_000);
    expect((await failure(callback(early.id, { status: 'REVERSED' }))).code).toBe('SERVICE_UNAVAILABLE');
    expect(await exceptionsOf(early.id)).toEqual([]);

    const d = await newDeposit(h, rig, co, -600_000);
    await sweepBoth();
    const reversal = signedCallback(d.id, { status: 'REVERSED', paidAt: new Date(d.expiresAt!.getTime() - 60_000) });
    const e = await failure(rig.uc.handlePseCallback.execute(reversal));
    expect(e).toBeInstanceOf(AppError);
    expect(e.code).toBe('SERVICE_UNAVAILABLE');
    expect((await exceptionsOf(d.id)).map((x) => x.kind)).toEqual(['REVERSED_WITHOUT_PAYMENT']);
    // The in-time payment arrives after all, then the provider redelivers the reversal: applied, once.
    expect(await callback(d.id, { status: 'PAID', paidAt: new Date(d.expiresAt!.getTime() - 60_000) })).toEqual({ accepted: true, duplicate: false });
    expect(await h.achAvailable(co)).toBe(NET);
    expect(await rig.uc.handlePseCallback.execute(reversal)).toEqual({ accepted: true, duplicate: false });
    expect(await rig.uc.handlePseCallback.execute(reversal)).toEqual({ accepted: true, duplicate: true });
    expect(await shown(co, d.id)).toBe('REVERSED');
    expect(await h.achAvailable(co)).toBe(0n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.expired', 'deposit.paid', 'deposit.reversed']);
    await clean(co);
  });

  it('the ledger refusing the credit parks the deposit with a money exception; an operator retries once the cause is fixed', async () => {
    // A company whose ACH wallet was never opened: RecordInflow answers WALLET_NOT_PROVISIONED.
    const co = `co-${randomUUID()}`;
    const d = await newDeposit(h, rig, co, 600_000);
    expect(await callback(d.id, { status: 'PAID', paidAt: new Date() })).toEqual({ accepted: true, duplicate: false });
    expect(await stored(d.id)).toEqual({ status: 'CREDITING', step_at: null });
    expect(await shown(co, d.id)).toBe('PENDING_CONFIRM');
    const [exc] = await exceptionsOf(d.id);
    expect(exc).toMatchObject({ kind: 'CREDIT_REFUSED', status: 'OPEN', theirs: { source: 'ledger', code: 'WALLET_NOT_PROVISIONED' } });
    // Parked: the sweepers leave it to the operator.
    await sweepBoth();
    expect((await stored(d.id)).status).toBe('CREDITING');
    expect((await failure(h.client.resolveException({ id: exc!.id, action: 'retry', note: 'sin billetera aún', resolvedBy: 'ops' }, h.ctx()))).code).toBe(
      'SERVICE_UNAVAILABLE',
    );
    // Still RESOLVING with `retry`: another action cannot take it; the same action resumes it once the wallet exists.
    expect((await failure(h.client.resolveException({ id: exc!.id, action: 'dismiss', note: 'x', resolvedBy: 'ops' }, h.ctx()))).code).toBe(
      'EXCEPTION_NOT_OPEN',
    );
    await h.ledgerClient.openWallets({ rails: [Rail.BREB, Rail.ACH] }, h.ctx(co));
    const done = await h.client.resolveException({ id: exc!.id, action: 'retry', note: 'billetera abierta', resolvedBy: 'ops' }, h.ctx());
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'retry' });
    expect(await shown(co, d.id)).toBe('ASSIGNED');
    expect(await h.achAvailable(co)).toBeGreaterThan(0n);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.paid']);
    await clean(co);
  });

  it('a money step whose owner died is finished by another replica, once (the ledger keys make a repeat a replay)', async () => {
    const co = await h.newCompany();
    const d = await newDeposit(h, rig, co, 600_000);
    // The owner wins CREDITING and dies before the ledger call.
    const dying: LedgerPort = {
      ...ledger,
      computeFees: ledger.computeFees.bind(ledger),
      reversePseInflow: ledger.reversePseInflow.bind(ledger),
      reserveReturn: ledger.reserveReturn.bind(ledger),
      commitReturn: ledger.commitReturn.bind(ledger),
      releaseReturn: ledger.releaseReturn.bind(ledger),
      recordPseInflow: async () => {
        throw new Error('process killed');
      },
    };
    const owner = buildRig(h, { ledger: dying });
    await expect(owner.uc.handlePseCallback.execute(signedCallback(d.id, { status: 'PAID', paidAt: new Date() }))).rejects.toThrow('process killed');
    expect((await stored(d.id)).status).toBe('CREDITING');
    expect(await shown(co, d.id)).toBe('PENDING_CONFIRM');
    await sweepBoth();
    expect(await shown(co, d.id)).toBe('ASSIGNED');
    expect(await h.achAvailable(co)).toBe(NET);
    expect(await outbox(d.id)).toEqual(['deposit.created', 'deposit.paid']);
    await clean(co);
  });
});
