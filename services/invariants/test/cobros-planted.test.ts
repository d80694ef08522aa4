import type pg from 'pg';
import { checkInvariants, violationLines } from '../src/index.js';
import { alnum, cobroOwnerSchemas, type OwnerSchemas } from './owner-schemas.js';

/**
 * Every check of the `cobros` line of `npm run ledger:check` (src/cobros.ts) that cobros.test.ts does not plant,
 * each planted alone on real Postgres (the schemas of pse-deposit and collect-key made by their own migrations,
 * rows written as the services write them, read through the read-only roles) and asserted by the exact line,
 * which names the planted resource: a cobro's totals and state against its payments (returned, PAID short,
 * open but complete, OPEN with money), a matched payment against its deposit (none, another company's, another
 * amount, not credited), a payment both matched and listed unmatched, returned on the cobro against returned at
 * the payment's owner, the cobro's dynamic key at collect-key, and the automatic returns (policy `return`). The
 * clean twin of each, where the check has a grace (the horizon) or an exemption, is asserted to report nothing.
 */
describe('cobros: a planted violation of each check is reported, naming what was planted', () => {
  let owners: OwnerSchemas;
  let client: pg.Client;

  beforeAll(async () => {
    owners = await cobroOwnerSchemas('invcobrosplant');
    client = owners.client;
  }, 120_000);
  afterAll(async () => {
    await owners?.close();
  });

  const check = async (co: string, o: { settled?: boolean } = {}) =>
    violationLines(await checkInvariants(client, { only: ['cobros'], partial: true, rail: 'none', companyId: co, ...o })).sort();

  /** A PSE deposit of the company, as pse-deposit keeps it. */
  async function deposit(co: string, amount: bigint, status = 'ASSIGNED'): Promise<string> {
    const id = `dep_${alnum(24)}`;
    await client.query(
      `insert into pse_deposit.deposits (id, company_id, source, status, amount, net_amount, movement_id, updated_at)
       values ($1, $2, 'PSE', $3, $4::bigint, $4::bigint, gen_random_uuid(), now())`,
      [id, co, status, amount.toString()],
    );
    return id;
  }
  /** A FIXED cobro of 100,000 in `state` with `paid` (and `returned`); a dynamic key id when `key` is given. */
  async function cobro(
    co: string,
    state: string,
    paid: bigint,
    o: { returned?: bigint; key?: string; closedAgoSeconds?: number; keyClosed?: boolean } = {},
  ): Promise<string> {
    const id = `cob_${alnum(24)}`;
    await client.query(
      `insert into pse_deposit.cobros (id, company_id, reference, state, amount_type, amount, paid_amount, returned_amount, overpayment_policy, methods,
         transaction_id, breb_key_id, request_hash, expires_at, created_at, updated_at, closed_at, key_closed_at)
       values ($1, $2, $3, $4, 'FIXED', 100000, $5::bigint, $6::bigint, 'accept', '{BREB_KEY}', $7, $8, '[]', now() + interval '1 day', now(), now(),
         case when $9::int is null then null else now() - $9::int * interval '1 second' end, case when $10 then now() end)`,
      [
        id,
        co,
        `FAC-${alnum(8)}`,
        state,
        paid.toString(),
        (o.returned ?? 0n).toString(),
        `CB${alnum(20).toUpperCase()}`,
        o.key ?? null,
        o.closedAgoSeconds ?? null,
        o.keyClosed ?? false,
      ],
    );
    return id;
  }
  async function payment(
    co: string,
    cobroId: string,
    depositId: string,
    amount: bigint,
    o: { returned?: bigint; auto?: { id: string; cents: bigint; status: string; matchedAgoSeconds?: number } } = {},
  ): Promise<void> {
    await client.query(
      `insert into pse_deposit.cobro_payments (deposit_id, cobro_id, company_id, source, amount, net_amount, matched_by, disposition, received_at, matched_at,
         returned_cents, auto_return_id, auto_return_cents, auto_return_status)
       values ($1, $2, $3, 'PSE', $4::bigint, $4::bigint - 1190, 'REFERENCE', 'COUNTED', now(), now() - $9::int * interval '1 second',
         $5::bigint, $6, $7::bigint, $8)`,
      [
        depositId,
        cobroId,
        co,
        amount.toString(),
        (o.returned ?? 0n).toString(),
        o.auto?.id ?? null,
        (o.auto?.cents ?? 0n).toString(),
        o.auto?.status ?? null,
        o.auto?.matchedAgoSeconds ?? 0,
      ],
    );
  }
  /** A refund of a PSE deposit at pse-deposit, RETURNED `agoSeconds` ago. */
  async function refund(co: string, depositId: string, amount: bigint, agoSeconds = 0, id = `ret_${alnum(24)}`): Promise<string> {
    await client.query(
      `insert into pse_deposit.deposit_returns (id, deposit_id, company_id, provider_transfer_id, inflow_key, amount, reason, status, movement_id, requested_by,
         returned_at)
       values ($1, $2, $3, $4, $5, $6::bigint, 'CUSTOMER_REQUEST', 'RETURNED', gen_random_uuid(), 'company', now() - $7::int * interval '1 second')`,
      [id, depositId, co, `pse-${depositId}`, `deposit:${depositId}:paid`, amount.toString(), agoSeconds],
    );
    return id;
  }
  /** A cobro's dynamic key at collect-key, in `state`. */
  async function key(co: string, cobroId: string, state: string): Promise<string> {
    const id = `bkey_${alnum(24)}`;
    await client.query(
      `insert into collect_key.keys (id, company_id, external_id, name, key_value, state, deleted_at, cobro_id, cobro_transaction_id, cobro_expires_at,
         cobro_qr_payload)
       values ($1, $2, $3, 'Cobro', $4, $5, case when $5 = 'DELETED' then now() end, $6, $7, now() + interval '1 day', '000201')`,
      [id, co, `cobro-${alnum(8)}`, `@c${alnum(12)}`, state, cobroId, `CB${alnum(20).toUpperCase()}`],
    );
    return id;
  }

  it("a cobro's totals and state against its payments: returned, PAID short of its amount, PARTIALLY_PAID complete, OPEN with money", async () => {
    const co = `co-${alnum(8)}`;
    // Returned 30,000 on the cobro; its payment had nothing returned (and nothing was returned at its owner).
    const returned = await cobro(co, 'PAID', 100_000n, { returned: 30_000n });
    await payment(co, returned, await deposit(co, 100_000n), 100_000n);
    const short = await cobro(co, 'PAID', 40_000n);
    await payment(co, short, await deposit(co, 40_000n), 40_000n);
    const complete = await cobro(co, 'PARTIALLY_PAID', 100_000n);
    await payment(co, complete, await deposit(co, 100_000n), 100_000n);
    const open = await cobro(co, 'OPEN', 40_000n);
    await payment(co, open, await deposit(co, 40_000n), 40_000n);
    expect(await check(co)).toEqual(
      [
        `[cobros] cobro ${returned} (company ${co}) PAID: returned 30000 but its COUNTED payments not reversed had 0 returned`,
        `[cobros] cobro ${short} (company ${co}) PAID with 40000 of 100000`,
        `[cobros] cobro ${complete} (company ${co}) PARTIALLY_PAID with 100000 of 100000: it should be PAID`,
        `[cobros] cobro ${open} (company ${co}) OPEN with 40000 paid`,
      ].sort(),
    );
  });

  it("a matched payment against its deposit: none, another company's, another amount, not credited", async () => {
    const co = `co-${alnum(8)}`;
    const other = `co-${alnum(8)}`;
    const cases: Array<[string, string]> = [];
    // Each on a PARTIALLY_PAID cobro whose total is the payment's, so only the payment's line is owed.
    const none = `dep_${alnum(24)}`;
    const theirs = await deposit(other, 40_000n);
    const bigger = await deposit(co, 50_000n);
    const failed = await deposit(co, 40_000n, 'FAILED');
    for (const [d, what] of [
      [none, 'no such deposit'],
      [theirs, `the deposit is company ${other}'s`],
      [bigger, 'matched 40000, the deposit is 50000'],
      [failed, 'the deposit is FAILED, not credited'],
    ] as const) {
      const c = await cobro(co, 'PARTIALLY_PAID', 40_000n);
      await payment(co, c, d, 40_000n);
      cases.push([c, `[cobros] payment ${d} of cobro ${c} (company ${co}): ${what}`]);
    }
    expect(await check(co)).toEqual(cases.map(([, line]) => line).sort());
  });

  it('a payment both matched to a cobro and listed unmatched', async () => {
    const co = `co-${alnum(8)}`;
    const c = await cobro(co, 'PAID', 100_000n);
    const d = await deposit(co, 100_000n);
    await payment(co, c, d, 100_000n);
    expect(await check(co)).toEqual([]);
    await client.query(
      `insert into pse_deposit.cobro_unmatched (deposit_id, company_id, cobro_id, reason, source, amount, received_at, created_at)
       values ($1, $2, null, 'NO_MATCH', 'PSE', 100000, now(), now())`,
      [d, co],
    );
    expect(await check(co)).toEqual([`[cobros] payment ${d} of cobro ${c} (company ${co}): also listed unmatched`]);
  });

  it("returned on the cobro against returned at the deposit's owner: more on the cobro; less, once settled or past the horizon; the automatic return aside", async () => {
    const co = `co-${alnum(8)}`;
    // More on the cobro (30,000) than its owner returned (20,000): reported now.
    const more = await cobro(co, 'PAID', 100_000n, { returned: 30_000n });
    const dMore = await deposit(co, 100_000n);
    await payment(co, more, dMore, 100_000n, { returned: 30_000n });
    await refund(co, dMore, 20_000n);
    // Less on the cobro (0) than a refund that reached the payer a moment ago: on its way (settled: reported).
    const less = await cobro(co, 'PAID', 100_000n);
    const dLess = await deposit(co, 100_000n);
    await payment(co, less, dLess, 100_000n);
    await refund(co, dLess, 25_000n);
    // The cobro's own automatic return is not counted as a return of the payment: no line.
    const auto = await cobro(co, 'PAID', 100_000n);
    const dAuto = await deposit(co, 120_000n);
    const autoId = `ret_${alnum(24)}`;
    await payment(co, auto, dAuto, 120_000n, { auto: { id: autoId, cents: 20_000n, status: 'REQUESTED' } });
    await refund(co, dAuto, 20_000n, 0, autoId);
    const moreLine = `[cobros] payment ${dMore} of cobro ${more} (company ${co}): 30000 returned on the cobro, 20000 returned at its owner`;
    const lessLine = `[cobros] payment ${dLess} of cobro ${less} (company ${co}): 0 returned on the cobro, 25000 returned at its owner`;
    expect(await check(co)).toEqual([moreLine]);
    expect(await check(co, { settled: true })).toEqual([moreLine, lessLine].sort());
    await client.query(`update pse_deposit.deposit_returns set returned_at = now() - interval '1 hour' where deposit_id = $1`, [dLess]);
    expect(await check(co)).toEqual([moreLine, lessLine].sort());
  });

  it("the cobro's dynamic key at collect-key: missing, not ACTIVE while open, not DELETED once its close is recorded, still to delete past the horizon", async () => {
    const co = `co-${alnum(8)}`;
    const withKey = async (state: string, paid: bigint, keyState: string, o: { closedAgoSeconds?: number; keyClosed?: boolean } = {}) => {
      const c = await cobro(co, state, paid, o);
      await client.query(`update pse_deposit.cobros set breb_key_id = $2 where id = $1`, [c, await key(co, c, keyState)]);
      return c;
    };
    // Clean: an open cobro with its ACTIVE key; a closed one whose key was deleted; one closed a moment ago (its key's close on its way).
    await withKey('OPEN', 0n, 'ACTIVE');
    await withKey('EXPIRED', 0n, 'DELETED', { closedAgoSeconds: 3600, keyClosed: true });
    await withKey('CANCELLED', 0n, 'ACTIVE', { closedAgoSeconds: 0 });
    expect(await check(co)).toEqual([]);

    const missingKey = `bkey_${alnum(24)}`;
    const missing = await cobro(co, 'OPEN', 0n, { key: missingKey });
    const suspended = await withKey('PARTIALLY_PAID', 40_000n, 'SUSPENDED');
    await payment(co, suspended, await deposit(co, 40_000n), 40_000n);
    const closed = await withKey('EXPIRED', 0n, 'ACTIVE', { closedAgoSeconds: 60, keyClosed: true });
    const owed = await withKey('EXPIRED', 0n, 'ACTIVE', { closedAgoSeconds: 3600 });
    const lines = await check(co);
    expect(lines).toHaveLength(4);
    const of = (id: string) => lines.filter((l) => l.includes(id));
    expect(of(missing)).toEqual([`[cobros] cobro ${missing} (company ${co}) OPEN: its dynamic key ${missingKey} is not at collect-key`]);
    expect(of(suspended)).toEqual([`[cobros] cobro ${suspended} (company ${co}) PARTIALLY_PAID: its dynamic key is SUSPENDED, not ACTIVE`]);
    expect(of(closed)).toEqual([`[cobros] cobro ${closed} (company ${co}) EXPIRED: its key close is recorded but the key is ACTIVE`]);
    expect(of(owed)).toEqual([
      expect.stringMatching(
        new RegExp(`^\\[cobros\\] cobro ${owed} \\(company ${co}\\) EXPIRED: its dynamic key is still to be deleted 36[0-9]{2} s after the close$`),
      ),
    ]);
  });

  it('automatic returns (policy return): one asked for that its owner does not have, one for another amount, one still owed past the horizon or once settled', async () => {
    const co = `co-${alnum(8)}`;
    /** A cobro PAID by a payment of 120,000 of which 20,000 is its automatic return. */
    const paidWithAuto = async (status: string, matchedAgoSeconds = 0) => {
      const c = await cobro(co, 'PAID', 100_000n);
      const d = await deposit(co, 120_000n);
      const id = `ret_${alnum(24)}`;
      await payment(co, c, d, 120_000n, { auto: { id, cents: 20_000n, status, matchedAgoSeconds } });
      return { c, d, id };
    };
    const unknown = await paidWithAuto('REQUESTED');
    const other = await paidWithAuto('REQUESTED');
    await refund(co, other.d, 15_000n, 0, other.id);
    const young = await paidWithAuto('OWED');
    const old = await paidWithAuto('OWED', 3600);
    const owedLine = (a: { c: string; d: string; id: string }, s: string) =>
      expect.stringMatching(new RegExp(`^\\[cobros\\] automatic return ${a.id} of payment ${a.d} \\(cobro ${a.c}\\) OWED: still owed ${s} s after the match$`));
    for (const settled of [false, true]) {
      const lines = await check(co, { settled });
      const of = (a: { id: string }) => lines.filter((l) => l.includes(a.id));
      expect(of(unknown)).toEqual([
        `[cobros] automatic return ${unknown.id} of payment ${unknown.d} (cobro ${unknown.c}) REQUESTED: no such return at the payment's owner`,
      ]);
      expect(of(other)).toEqual([
        `[cobros] automatic return ${other.id} of payment ${other.d} (cobro ${other.c}) REQUESTED: 20000 recorded, the return is for 15000`,
      ]);
      expect(of(old)).toEqual([owedLine(old, '36[0-9]{2}')]);
      // Owed since a moment ago: the cobro sweeper's to ask for, unless the check is of a settled system.
      expect(of(young)).toEqual(settled ? [owedLine(young, '[0-9]+')] : []);
      expect(lines).toHaveLength(settled ? 4 : 3);
    }
  });
});
