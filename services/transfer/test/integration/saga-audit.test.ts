import { randomUUID } from 'node:crypto';
import { AppError, createLogger, signPayload } from '@wallet/platform';
import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { transferDeps } from '../../src/app/deps.js';
import type { BrebDirectoryPort, DispatchResult, LedgerPort, RailPort, RailStatus } from '../../src/app/ports.js';
import { Sweeper } from '../../src/app/sweeper.js';
import { transferUseCases } from '../../src/app/use-cases.js';
import type { TransferRecord } from '../../src/domain/transfer.js';
import { SqlApprovalStore } from '../../src/persistence/approval.store.js';
import { SqlTransferStore } from '../../src/persistence/transfer.store.js';
import { Rail, expectLedgerOk, newCompany, sagaSettings, startHarness, testProtection, wallet, type Harness } from './harness.js';
import { sagaViolations } from './saga-invariants.js';
import { devMeshTls } from '@wallet/platform';

/** The audit's findings on the send saga, each replayed step by step on real Postgres and the real ledger. */
const SECRET = 'saga-audit-callback-secret';
const RECIPIENT = {
  firstName: 'Ana',
  lastName: 'Gómez',
  fullName: 'Ana Gómez',
  idType: 'CC',
  idValue: '1012345678',
  bankName: 'Banco',
  bankAccountType: 'Ahorros',
  status: 'ACTIVE',
};
const directory: BrebDirectoryPort = {
  async lookup() {
    return { status: 'active', anchorHandle: 'a-1', keyType: 'PHONE', keyValue: '3001112233', recipient: RECIPIENT };
  },
};

/** A rail whose answers each test sets: it keeps what it received and can pay it. */
class ControlledRail implements RailPort {
  received = new Map<string, 'PENDING' | 'COMPLETED' | 'FAILED'>();
  onDispatch: (t: TransferRecord) => DispatchResult | 'crash' = () => ({ outcome: 'accepted', providerTransferId: 'p' });
  statusAnswer: 'truth' | 'unavailable' = 'truth';
  async dispatch(t: TransferRecord): Promise<DispatchResult> {
    const r = this.onDispatch(t);
    if (r === 'crash') {
      this.received.set(t.id, 'PENDING');
      // The rail took it; this process dies before reading the answer.
      throw new Error('process killed after sending');
    }
    if (r.outcome === 'accepted') this.received.set(t.id, 'PENDING');
    return r;
  }
  async status(_rail: 'BREB' | 'ACH', id: string): Promise<RailStatus> {
    if (this.statusAnswer === 'unavailable') return { unavailable: true, error: 'http 503' };
    const s = this.received.get(id);
    return s ? { found: true, status: s, providerTransferId: `p-${id}`, errorMessage: null } : { found: false };
  }
  async validateAchAccount() {
    return { result: 'valid' as const };
  }
}

describe('send saga: the audit findings', () => {
  let h: Harness;
  let ledger: GrpcLedger;
  beforeAll(async () => {
    h = await startHarness({ transferEnv: { SWEEPER_INTERVAL_MS: '3600000' } });
    ledger = new GrpcLedger(h.ledger.address, devMeshTls('transfer'));
  }, 60_000);
  afterAll(async () => {
    ledger?.close();
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerOk(h);
  });

  function rig(o: { dispatchTimeoutSeconds?: number; ledger?: LedgerPort; store?: SqlTransferStore } = {}) {
    const rail = new ControlledRail();
    const deps = transferDeps({
      store: o.store ?? new SqlTransferStore(h.transfer!.db, testProtection),
      approvals: new SqlApprovalStore(h.transfer!.db, testProtection),
      ledger: o.ledger ?? ledger,
      directory,
      rails: rail,
      settings: sagaSettings(SECRET, { dispatchTimeoutSeconds: o.dispatchTimeoutSeconds ?? 300 }),
      log: createLogger('saga-audit', process.env.TEST_LOG_LEVEL ?? 'silent'),
      eventsWritten: () => undefined,
      destinationFingerprint: (d) => testProtection.destinationFingerprint(d),
    });
    const uc = transferUseCases(deps);
    const sweeper = new Sweeper(deps, uc.saga, { intervalMs: 3_600_000, batch: 10, leaseMs: 0 });
    const callback = (t: { id: string }, status: 'COMPLETED' | 'FAILED', eventId = `evt-${randomUUID()}`) => {
      const body = Buffer.from(JSON.stringify({ eventId, transactionId: t.id, providerTransferId: `p-${t.id}`, rail: 'BREB', status, errorMessage: null }));
      return uc.handleRailCallback.execute({ rail: 'BREB', rawBody: body, signature: signPayload(SECRET, body, Math.floor(Date.now() / 1000)) });
    };
    return { rail, uc, sweeper, callback };
  }

  const sendOf = (co: { id: string; profile: never }, amount: bigint) => ({
    amount,
    brebKey: { type: 'PHONE', value: '3001112233' },
    targetName: RECIPIENT.fullName,
    targetDocument: RECIPIENT.idValue,
    company: co.profile,
    requestHash: randomUUID(),
  });
  const exceptionsOf = (id: string) =>
    h.transfer!.db.query<{ kind: string; status: string }>('select kind, status from transfer.money_exceptions where resource_id = ?', [id]);

  it('a dispatch the rail took before this process died is never released on a time-out the rail cannot answer', async () => {
    const { rail, uc, sweeper, callback } = rig({ dispatchTimeoutSeconds: 0 });
    const co = await newCompany(h, { breb: 1_000_000n });
    rail.onDispatch = () => 'crash';
    await expect(uc.send.execute({ companyId: co.id }, sendOf(co as never, 1_000_000n))).rejects.toThrow('process killed');
    const [row] = await h.transfer!.db.query<{ id: string; state: string; dispatch_attempts: number }>(
      'select id::text as id, state, dispatch_attempts from transfer.transfers where company_id = ?',
      [co.id],
    );
    // The attempt was counted before the rail was called.
    expect(row).toMatchObject({ state: 'RESERVED', dispatch_attempts: 1 });
    // Past RAIL_DISPATCH_TIMEOUT_SECONDS the rail answers 503 to everything: the funds stay held.
    rail.statusAnswer = 'unavailable';
    rail.onDispatch = () => ({ outcome: 'unavailable', ambiguous: false, error: 'http 503' });
    await sweeper.tick();
    await sweeper.tick();
    expect((await uc.saga.reload({ id: row!.id } as TransferRecord)).state).toBe('RESERVED');
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 0n, pending: 1_000_000n });
    expect(await exceptionsOf(row!.id)).toEqual([{ kind: 'DISPATCH_OUTCOME_UNKNOWN', status: 'OPEN' }]);
    // The rail pays it and says so: COMPLETED, the hold committed, once.
    rail.received.set(row!.id, 'COMPLETED');
    expect(await callback(row!, 'COMPLETED')).toEqual({ accepted: true, duplicate: false });
    expect((await uc.saga.reload({ id: row!.id } as TransferRecord)).state).toBe('COMPLETED');
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 0n, pending: 0n });
    expect(await sagaViolations(h.tdb.url, co.id, rail.received)).toEqual([]);
  });

  it('a time-out with the rail saying it never received the transfer releases it', async () => {
    const { rail, uc, sweeper } = rig({ dispatchTimeoutSeconds: 0 });
    const co = await newCompany(h, { breb: 50_000n });
    rail.onDispatch = () => ({ outcome: 'unavailable', ambiguous: true, error: 'socket hang up' });
    const t = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 50_000n))).transfer;
    expect(t.state).toBe('RESERVED');
    await sweeper.tick(); // asks the rail: not found (definite) → RELEASING → FAILED
    expect((await uc.saga.reload(t)).state).toBe('FAILED');
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 50_000n, pending: 0n });
    expect(await sagaViolations(h.tdb.url, co.id, rail.received)).toEqual([]);
  });

  it('a COMPLETED callback for a DISPATCHED transfer is one statement before the commit (no read); a FAILED one, or a repeat, reads the transfer', async () => {
    const store = new SqlTransferStore(h.transfer!.db, testProtection);
    const calls: string[] = [];
    for (const m of ['getForCallback', 'get', 'transition', 'transitionOnCallback'] as const) {
      const f = (store[m] as (...a: unknown[]) => Promise<unknown>).bind(store);
      (store as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
        calls.push(m);
        return f(...a);
      };
    }
    const { rail, uc, callback } = rig({ store });
    const co = await newCompany(h, { breb: 100_000n });
    const paid = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 20_000n))).transfer;
    const refused = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 30_000n))).transfer;
    expect([paid.state, refused.state]).toEqual(['DISPATCHED', 'DISPATCHED']);
    calls.length = 0;
    rail.received.set(paid.id, 'COMPLETED');
    expect(await callback(paid, 'COMPLETED', `evt-paid-${paid.id}`)).toEqual({ accepted: true, duplicate: false });
    expect(calls).toEqual(['transitionOnCallback', 'transition']); // COMPLETING (recording the callback), the commit, COMPLETED
    calls.length = 0;
    expect(await callback(paid, 'COMPLETED', `evt-paid-${paid.id}`)).toEqual({ accepted: true, duplicate: true });
    expect(calls).toEqual(['transitionOnCallback', 'getForCallback']);
    calls.length = 0;
    rail.received.set(refused.id, 'FAILED');
    expect(await callback(refused, 'FAILED')).toEqual({ accepted: true, duplicate: false });
    expect(calls[0]).toBe('getForCallback');
    expect((await uc.saga.reload(paid)).state).toBe('COMPLETED');
    expect((await uc.saga.reload(refused)).state).toBe('FAILED');
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 80_000n, pending: 0n });
    expect(await sagaViolations(h.tdb.url, co.id, rail.received)).toEqual([]);
  });

  it('COMPLETED for a transfer we released is a money exception, not a silent duplicate', async () => {
    const { rail, uc, callback } = rig();
    const co = await newCompany(h, { breb: 20_000n });
    const t = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 20_000n))).transfer;
    expect(t.state).toBe('DISPATCHED');
    expect(await callback(t, 'FAILED')).toEqual({ accepted: true, duplicate: false });
    expect((await uc.saga.reload(t)).state).toBe('FAILED');
    rail.received.set(t.id, 'COMPLETED');
    const r = await callback(t, 'COMPLETED');
    expect(r).toEqual({ accepted: true, duplicate: true });
    expect(await exceptionsOf(t.id)).toEqual([{ kind: 'RAIL_COMPLETED_AFTER_RELEASE', status: 'OPEN' }]);
    // Nothing moved: the company has its money back; an operator decides.
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 20_000n, pending: 0n });
    // The same contradiction again opens nothing new.
    await callback(t, 'COMPLETED');
    expect(await exceptionsOf(t.id)).toHaveLength(1);
    expect(await sagaViolations(h.tdb.url, co.id, rail.received)).toEqual([]);
  });

  it('FAILED for a transfer the rail already completed is a money exception; the commit stands', async () => {
    const { rail, uc, callback } = rig();
    const co = await newCompany(h, { breb: 20_000n });
    const t = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 20_000n))).transfer;
    rail.received.set(t.id, 'COMPLETED');
    await callback(t, 'COMPLETED');
    expect((await uc.saga.reload(t)).state).toBe('COMPLETED');
    expect(await callback(t, 'FAILED')).toEqual({ accepted: true, duplicate: true });
    expect(await exceptionsOf(t.id)).toEqual([{ kind: 'RAIL_FAILED_AFTER_COMPLETION', status: 'OPEN' }]);
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 0n, pending: 0n });
  });

  it('only the writers the table names may apply an event', async () => {
    const { uc } = rig();
    const co = await newCompany(h, { breb: 10_000n });
    const t = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 10_000n))).transfer;
    await expect(uc.saga.apply(t, 'abandon', 'rail')).rejects.toThrow('rail may not apply abandon');
    await expect(uc.saga.apply(t, 'rail_completed', 'request')).rejects.toThrow('request may not apply rail_completed');
    expect((await uc.saga.reload(t)).state).toBe(t.state);
  });

  it('a late Reserve for a transfer the sweeper gave up is refused by the ledger; nothing stays held', async () => {
    const { sweeper } = rig();
    const co = await newCompany(h, { breb: 30_000n });
    // The request recorded RECEIVED; its Reserve timed out at the caller and is still on the wire.
    const pending: { run?: () => Promise<unknown> } = {};
    const slow: LedgerPort = Object.assign(Object.create(ledger) as GrpcLedger, {
      reserve: (cmd: Parameters<LedgerPort['reserve']>[0]) => {
        pending.run = () => ledger.reserve(cmd);
        return Promise.reject(new AppError('SERVICE_UNAVAILABLE'));
      },
    });
    const { uc: uc2 } = rig({ ledger: slow });
    await expect(uc2.send.execute({ companyId: co.id }, sendOf(co as never, 30_000n))).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await sweeper.tick(); // RECEIVED → ABANDONING → void wins → REJECTED
    const [row] = await h.transfer!.db.query<{ state: string }>('select state from transfer.transfers where company_id = ?', [co.id]);
    expect(row!.state).toBe('REJECTED');
    await expect(pending.run!()).rejects.toMatchObject({ code: 'RESERVE_VOIDED' });
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 30_000n, pending: 0n });
    expect(await sagaViolations(h.tdb.url, co.id)).toEqual([]);
  });

  it("a send makes no ComputeFees call: its Reserve asks the ledger for the fee, acceptance records it, and one given up after its hold landed shows that hold's fee", async () => {
    const co = await newCompany(h, { breb: 1_000_000n, iva: true, brebFee: [300n, 25] });
    const calls: string[] = [];
    const counted: LedgerPort = Object.assign(Object.create(ledger) as GrpcLedger, {
      computeFees: (...a: Parameters<LedgerPort['computeFees']>) => {
        calls.push('computeFees');
        return ledger.computeFees(...a);
      },
      reserve: (cmd: Parameters<LedgerPort['reserve']>[0]) => {
        calls.push(`reserve fee=${cmd.fee === null ? 'ledger' : 'given'}`);
        return ledger.reserve(cmd);
      },
    });
    const { uc } = rig({ ledger: counted });
    // 300 + 25 bps of 200,000 (500) = 800; IVA 152.
    const fee = { fixedFee: 300n, variableFee: 500n, subtotalFee: 800n, ivaApplicable: true, ivaAmount: 152n, totalCharged: 952n };
    const t = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 200_000n))).transfer;
    expect(calls).toEqual(['reserve fee=ledger']);
    expect(t).toMatchObject({ state: 'DISPATCHED', fee });
    expect((await uc.saga.reload(t)).fee).toEqual(fee);
    const [created] = await h.transfer!.db.query<{ payload: { totalFee: string; ivaAmount: string } }>(
      "select payload from transfer.outbox where subject = 'transfer.created' and payload->>'transferId' = ?",
      [t.id],
    );
    expect(created?.payload).toMatchObject({ totalFee: '800', ivaAmount: '152' });
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n - 200_952n, pending: 200_952n });

    // The Reserve lands but its reply is lost: RECEIVED with no fee yet; the sweeper gives it up,
    // finds the hold, releases it, and the FAILED transfer shows the fee that hold reserved.
    const lost: LedgerPort = Object.assign(Object.create(ledger) as GrpcLedger, {
      reserve: async (cmd: Parameters<LedgerPort['reserve']>[0]) => {
        await ledger.reserve(cmd);
        throw new AppError('SERVICE_UNAVAILABLE');
      },
    });
    const { uc: uc2, sweeper } = rig({ ledger: lost });
    await expect(uc2.send.execute({ companyId: co.id }, sendOf(co as never, 100_000n))).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const [row] = await h.transfer!.db.query<{ id: string; state: string; subtotal_fee: string }>(
      'select id::text as id, state, subtotal_fee::text as subtotal_fee from transfer.transfers where company_id = ? and amount = 100000',
      [co.id],
    );
    expect(row).toMatchObject({ state: 'RECEIVED', subtotal_fee: '0' });
    await sweeper.tick(); // RECEIVED → ABANDONING → the void finds the hold → released → FAILED
    const given = await uc.saga.reload({ id: row!.id } as TransferRecord);
    expect(given).toMatchObject({
      state: 'FAILED',
      fee: { fixedFee: 300n, variableFee: 250n, subtotalFee: 550n, ivaApplicable: true, ivaAmount: 105n, totalCharged: 655n },
    });
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 1_000_000n - 200_952n, pending: 200_952n });
    expect(await sagaViolations(h.tdb.url, co.id)).toEqual([]);
  });

  it('a ledger from before compute_fee (a rolling deploy): its refusal for want of a fee gets the fee computed first, and the send goes through', async () => {
    const co = await newCompany(h, { breb: 100_000n, brebFee: [100n, 0] });
    const calls: string[] = [];
    // What such a ledger answers to a Reserve without `fee` (checkFee, before anything is written).
    const older: LedgerPort = Object.assign(Object.create(ledger) as GrpcLedger, {
      computeFees: (...a: Parameters<LedgerPort['computeFees']>) => {
        calls.push('computeFees');
        return ledger.computeFees(...a);
      },
      reserve: (cmd: Parameters<LedgerPort['reserve']>[0]) => {
        calls.push(`reserve fee=${cmd.fee === null ? 'ledger' : 'given'}`);
        if (cmd.fee === null) return Promise.reject(new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'fee', message: 'is required' }] }));
        return ledger.reserve(cmd);
      },
    });
    const { uc } = rig({ ledger: older });
    const t = (await uc.send.execute({ companyId: co.id }, sendOf(co as never, 50_000n))).transfer;
    expect(calls).toEqual(['reserve fee=ledger', 'computeFees', 'reserve fee=given']);
    expect(t).toMatchObject({ state: 'DISPATCHED', fee: { fixedFee: 100n, subtotalFee: 100n, totalCharged: 100n } });
    expect(await wallet(h, co.id, Rail.BREB)).toEqual({ available: 100_000n - 50_100n, pending: 50_100n });
    // The fallback's own refusal is the answer (the balance here), once.
    calls.length = 0;
    await expect(uc.send.execute({ companyId: co.id }, sendOf(co as never, 60_000n))).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    expect(calls).toEqual(['reserve fee=ledger', 'computeFees', 'reserve fee=given']);
    // Another refusal of the ledger's (not for want of a fee) is not retried.
    const refusing: LedgerPort = Object.assign(Object.create(ledger) as GrpcLedger, {
      reserve: (cmd: Parameters<LedgerPort['reserve']>[0]) => {
        calls.push(`reserve fee=${cmd.fee === null ? 'ledger' : 'given'}`);
        return Promise.reject(new AppError('INVALID_REQUEST', undefined, { fields: [{ path: 'movement.id', message: 'must be a UUID' }] }));
      },
    });
    calls.length = 0;
    await expect(rig({ ledger: refusing }).uc.send.execute({ companyId: co.id }, sendOf(co as never, 1_000n))).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
    expect(calls).toEqual(['reserve fee=ledger']);
  });
});
