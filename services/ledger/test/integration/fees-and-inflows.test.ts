import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { eventually } from '@wallet/platform/testing';
import {
  FeeOperation,
  InflowSource,
  countRows,
  MovementStatus,
  MovementType,
  Rail,
  expectLedgerConsistent,
  failure,
  fee,
  startHarness,
  walletOf,
  zeroFee,
  type Harness,
} from './harness.js';

describe('fees, fee charges and inflows', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerConsistent(h);
  });

  const wallet = async (co: string, rail: (typeof Rail)[keyof typeof Rail]) => walletOf((await h.api.balances(co)).wallets, rail);

  it('fees default to 0; the default applies to everyone, a company row overrides it for that company', async () => {
    const a = h.newCompany();
    const b = h.newCompany();
    expect(await h.api.computeFees(a, { operation: FeeOperation.ACH_OUTFLOW, amount: 1_000_000n, ivaApplicable: true })).toEqual({
      fixedFee: 0n,
      variableFee: 0n,
      subtotalFee: 0n,
      ivaApplicable: true,
      ivaAmount: 0n,
      totalCharged: 0n,
    });
    const def = await h.api.setFee({ operation: FeeOperation.ACH_OUTFLOW, fixedFeeCents: 300n, variableBps: 10 });
    expect(def).toMatchObject({ operation: FeeOperation.ACH_OUTFLOW, fixedFeeCents: 300n, variableBps: 10 });
    expect(def.companyId).toBeUndefined();
    expect(def.updatedAt).toBeInstanceOf(Date);
    const own = await h.api.setFee({ operation: FeeOperation.ACH_OUTFLOW, companyId: a, fixedFeeCents: 100n, variableBps: 25 });
    expect(own.companyId).toBe(a);
    // Upsert: setting again replaces, never duplicates.
    await h.api.setFee({ operation: FeeOperation.ACH_OUTFLOW, fixedFeeCents: 250n, variableBps: 15 });
    expect(await countRows(h, `select count(*)::text as n from ledger.fee_configs where operation = 'ACH_OUTFLOW'`)).toBe(2);

    // a: 100 + round_half_up(12345 * 25 / 10000 = 30.8625) = 131; IVA round_half_up(24.89) = 25.
    expect(await h.api.computeFees(a, { operation: FeeOperation.ACH_OUTFLOW, amount: 12_345n, ivaApplicable: true })).toEqual({
      fixedFee: 100n,
      variableFee: 31n,
      subtotalFee: 131n,
      ivaApplicable: true,
      ivaAmount: 25n,
      totalCharged: 156n,
    });
    // b: the default, 250 + round_half_up(12345 * 15 / 10000 = 18.5175) = 269; no IVA.
    expect(await h.api.computeFees(b, { operation: FeeOperation.ACH_OUTFLOW, amount: 12_345n, ivaApplicable: false })).toEqual({
      fixedFee: 250n,
      variableFee: 19n,
      subtotalFee: 269n,
      ivaApplicable: false,
      ivaAmount: 0n,
      totalCharged: 269n,
    });
    // Another operation is untouched.
    expect((await h.api.computeFees(a, { operation: FeeOperation.BREB_OUTFLOW, amount: 12_345n, ivaApplicable: true })).totalCharged).toBe(0n);

    // maxTransferAmount follows the company's own fee: amount + fee + IVA fits available.
    await h.api.open(a);
    await h.api.credit(a, { rail: Rail.ACH, amountCents: 1_000_000n });
    const max = (await wallet(a, Rail.ACH)).maxTransferAmount;
    const cost = (x: bigint) => {
      const sub = 100n + (x * 25n * 2n + 10_000n) / 20_000n;
      return x + sub + (sub * 19n * 2n + 100n) / 200n;
    };
    // With iva_applicable false the IVA is not counted.
    const noIva = walletOf((await h.api.balances(a, false)).wallets, Rail.ACH).maxTransferAmount;
    const withIva = walletOf((await h.api.balances(a, true)).wallets, Rail.ACH).maxTransferAmount;
    expect(max).toBe(noIva);
    expect(cost(withIva)).toBeLessThanOrEqual(1_000_000n);
    expect(cost(withIva + 1n)).toBeGreaterThan(1_000_000n);
    expect(noIva).toBeGreaterThan(withIva);
  });

  it('fee schedules come from memory, kept current by the change feed: a change by SetFeeConfig applies at once, one by SQL as soon as it is notified, and with the feed lost the table is read', async () => {
    const co = h.newCompany();
    const q = async () => (await h.api.computeFees(co, { operation: FeeOperation.BREB_OUTFLOW, amount: 10_000n, ivaApplicable: false })).subtotalFee;
    const sql = async (text: string, params: unknown[] = []) => {
      const c = new pg.Client({ connectionString: h.tdb.url });
      await c.connect();
      try {
        return (await c.query(text, params)).rows;
      } finally {
        await c.end();
      }
    };
    const becomes = async (want: bigint) => {
      await eventually(async () => (await q()) === want, 2_000, 10);
      return q();
    };
    await h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, companyId: co, fixedFeeCents: 111n, variableBps: 0 });
    expect(await q()).toBe(111n); // this replica dropped its copy when it wrote
    // Another writer (an operator's SQL, another replica): the trigger notifies, the copy is reloaded.
    await sql(`update ledger.fee_configs set fixed_fee_cents = 222 where operation = 'BREB_OUTFLOW' and company_id = $1`, [co]);
    expect(await becomes(222n)).toBe(222n);
    // and stays so
    for (let i = 0; i < 20; i++) expect(await q()).toBe(222n);
    // Feed lost: the copy is dropped and each read goes to the table until the feed is back.
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen ledger_fees%'`);
    await sql(`delete from ledger.fee_configs where operation = 'BREB_OUTFLOW' and company_id = $1`, [co]);
    expect(await becomes(0n)).toBe(0n);
    await eventually(
      async () => (await sql(`select 1 from pg_stat_activity where datname = current_database() and query ilike 'listen ledger_fees%'`)).length > 0,
      5_000,
    );
    await sql(`insert into ledger.fee_configs (operation, company_id, fixed_fee_cents, variable_bps) values ('BREB_OUTFLOW', $1, 333, 0)`, [co]);
    expect(await becomes(333n)).toBe(333n);
  });

  it('refuses bad fee configurations and fee queries', async () => {
    expect((await failure(h.api.setFee({ operation: FeeOperation.UNSPECIFIED, fixedFeeCents: 1n, variableBps: 1 }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, fixedFeeCents: -1n, variableBps: 1 }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.setFee({ operation: FeeOperation.BREB_OUTFLOW, fixedFeeCents: 1n, variableBps: 10_001 }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.computeFees(h.newCompany(), { operation: FeeOperation.BREB_OUTFLOW, amount: 0n }))).code).toBe('INVALID_REQUEST');
  });

  it('charges an admin fee only when available covers fee + IVA', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 1_000n });
    const r = await h.api.chargeFee(co, { feeCents: 500n, ivaCents: 95n, reference: 'monthly', description: 'cuota' });
    expect(r.movement).toMatchObject({
      type: MovementType.FEE_CHARGE,
      rail: Rail.BREB,
      status: MovementStatus.COMPLETED,
      amount: 595n,
      totalFee: 500n,
      ivaAmount: 95n,
      netAmount: 595n,
      reference: 'monthly',
      details: { description: 'cuota' },
    });
    expect(await wallet(co, Rail.BREB)).toMatchObject({ availableCents: 405n, version: 2n });
    expect((await failure(h.api.chargeFee(co, { feeCents: 400n, ivaCents: 76n }))).code).toBe('INSUFFICIENT_BALANCE');
    expect((await failure(h.api.chargeFee(co, { feeCents: 0n, ivaCents: 0n }))).code).toBe('INVALID_REQUEST');
    expect(await wallet(co, Rail.BREB)).toMatchObject({ availableCents: 405n, version: 2n });
  });

  it('records a PSE inflow into the ACH wallet and a Bre-B inflow into the BREB wallet, net of fee and IVA', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const depositId = randomUUID();
    const pse = await h.api.inflow(co, {
      source: InflowSource.PSE,
      grossCents: 100_000n,
      fee: fee(1_000n, 0n, 190n),
      movement: {
        id: depositId,
        status: MovementStatus.UNSPECIFIED,
        reference: 'dep-1',
        details: { payerName: 'Luis', payerDocument: '99887766', payerBank: 'Nequi' },
      },
    });
    expect(pse.movement).toMatchObject({
      id: depositId,
      type: MovementType.TRANSFER_IN,
      rail: Rail.PSE,
      walletRail: Rail.ACH,
      status: MovementStatus.COMPLETED,
      amount: 100_000n,
      totalFee: 1_000n,
      ivaAmount: 190n,
      netAmount: 98_810n,
      reference: 'dep-1',
      details: { payerName: 'Luis', payerDocument: '99887766', payerBank: 'Nequi' },
    });
    const breb = await h.api.inflow(co, { source: InflowSource.BREB, grossCents: 5_000n, fee: zeroFee() });
    expect(breb.movement).toMatchObject({ rail: Rail.BREB, walletRail: Rail.BREB, netAmount: 5_000n });
    expect(await wallet(co, Rail.ACH)).toMatchObject({ availableCents: 98_810n, version: 1n });
    expect(await wallet(co, Rail.BREB)).toMatchObject({ availableCents: 5_000n, version: 1n });

    const lines = await h.ledger.db.query<{ account: string; amount: string }>(
      `select account, amount::text as amount from ledger.entries where posting_id = ?::uuid order by seq`,
      [pse.postingId],
    );
    expect(lines).toEqual([
      { account: 'pse_settlement', amount: '-100000' },
      { account: `wallet_available:${co}:ACH`, amount: '98810' },
      { account: 'fee_revenue:PSE_INFLOW', amount: '1000' },
      { account: 'iva_payable', amount: '190' },
    ]);
  });

  it('reverses a PSE inflow once: the paid posting negated, movement REVERSED, available may go below zero', async () => {
    const co = h.newCompany();
    const other = h.newCompany();
    await h.api.open(co);
    const movementId = randomUUID();
    const inflowKey = `deposit:${movementId}:paid`;
    await h.api.inflow(co, {
      idempotencyKey: inflowKey,
      source: InflowSource.PSE,
      grossCents: 100_000n,
      fee: fee(1_000n, 0n, 190n),
      movement: { id: movementId, status: MovementStatus.UNSPECIFIED, reference: 'dep-r' },
    });
    // Spend part of it so the reversal takes available below zero.
    const hold = await h.api.reserve(co, { rail: Rail.ACH, amount: 50_000n });
    await h.api.commit(co, hold.hold!.id);
    expect(await wallet(co, Rail.ACH)).toMatchObject({ availableCents: 48_810n });

    // Another company's inflow reads like an unknown one.
    expect((await failure(h.api.reverseInflow(other, { originalIdempotencyKey: inflowKey }))).code).toBe('TRANSACTION_NOT_FOUND');
    expect((await failure(h.api.reverseInflow(co, { originalIdempotencyKey: 'deposit:nope:paid' }))).code).toBe('TRANSACTION_NOT_FOUND');
    expect((await failure(h.api.reverseInflow(co, { originalIdempotencyKey: '' }))).code).toBe('INVALID_REQUEST');

    const key = `deposit:${movementId}:reversed`;
    const r = await h.api.reverseInflow(co, { idempotencyKey: key, originalIdempotencyKey: inflowKey, errorMessage: 'Reversado por el banco' });
    expect(r.replayed).toBe(false);
    expect(r.movement).toMatchObject({
      id: movementId,
      status: MovementStatus.REVERSED,
      netAmount: 98_810n,
      details: { errorMessage: 'Reversado por el banco' },
    });
    expect(await wallet(co, Rail.ACH)).toMatchObject({ availableCents: -50_000n });
    const lines = await h.ledger.db.query<{ account: string; amount: string }>(
      `select account, amount::text as amount from ledger.entries where posting_id = ?::uuid order by seq`,
      [r.postingId],
    );
    expect(lines).toEqual([
      { account: 'pse_settlement', amount: '100000' },
      { account: `wallet_available:${co}:ACH`, amount: '-98810' },
      { account: 'fee_revenue:PSE_INFLOW', amount: '-1000' },
      { account: 'iva_payable', amount: '-190' },
    ]);
    // Same key: the first result; another key: the inflow is already reversed.
    const again = await h.api.reverseInflow(co, { idempotencyKey: key, originalIdempotencyKey: inflowKey, errorMessage: 'Reversado por el banco' });
    expect(again).toMatchObject({ postingId: r.postingId, replayed: true });
    expect((await failure(h.api.reverseInflow(co, { originalIdempotencyKey: inflowKey }))).code).toBe('INVALID_STATE_TRANSITION');
    expect(await wallet(co, Rail.ACH)).toMatchObject({ availableCents: -50_000n });
    // A send is refused until the negative balance is covered.
    expect((await failure(h.api.reserve(co, { rail: Rail.ACH, amount: 100n }))).code).toBe('INSUFFICIENT_BALANCE');
    const inv = await h.api.invariants();
    expect(inv.violations).toEqual([]);
    expect(inv.ok).toBe(true);
  });

  it('an unassigned Bre-B inflow is held in unassigned_funds: no wallet change, no movement', async () => {
    const co = h.newCompany();
    await h.api.open(co);
    const key = `collectkey:payment:${randomUUID()}`;
    const r = await h.api.inflow(co, { idempotencyKey: key, source: InflowSource.BREB, grossCents: 7_000n, assign: false });
    expect(r.movement).toBeUndefined();
    expect(r.replayed).toBe(false);
    const again = await h.api.inflow(co, { idempotencyKey: key, source: InflowSource.BREB, grossCents: 7_000n, assign: false });
    expect(again).toEqual({ postingId: r.postingId, replayed: true });
    expect(await wallet(co, Rail.BREB)).toMatchObject({ availableCents: 0n, version: 0n });
    expect((await h.api.list(co)).items).toEqual([]);
    const lines = await h.ledger.db.query<{ account: string; amount: string }>(
      `select account, amount::text as amount from ledger.entries where posting_id = ?::uuid order by seq`,
      [r.postingId],
    );
    expect(lines).toEqual([
      { account: 'breb_settlement', amount: '-7000' },
      { account: 'unassigned_funds:BREB', amount: '7000' },
    ]);
    expect((await failure(h.api.inflow(co, { source: InflowSource.PSE, grossCents: 7_000n, assign: false }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.inflow(co, { source: InflowSource.BREB, grossCents: 7_000n, assign: false, fee: fee(10n, 0n, 0n) }))).code).toBe(
      'INVALID_REQUEST',
    );
  });

  it('refuses inflows whose fee eats the gross, without a wallet, or with a bad source', async () => {
    const co = h.newCompany();
    await h.api.open(co, [Rail.BREB]);
    expect((await failure(h.api.inflow(co, { source: InflowSource.BREB, grossCents: 100n, fee: fee(100n, 0n, 0n) }))).code).toBe('FEE_EXCEEDS_AMOUNT');
    expect((await failure(h.api.inflow(co, { source: InflowSource.PSE, grossCents: 100n, fee: zeroFee() }))).code).toBe('WALLET_NOT_PROVISIONED');
    expect((await failure(h.api.inflow(co, { source: InflowSource.UNSPECIFIED, grossCents: 100n, fee: zeroFee() }))).code).toBe('INVALID_REQUEST');
    expect((await failure(h.api.inflow(co, { source: InflowSource.BREB, grossCents: 100n }))).code).toBe('INVALID_REQUEST');
  });
});
