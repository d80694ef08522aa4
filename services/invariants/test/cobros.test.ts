import type pg from 'pg';
import { checkInvariants, violationLines } from '../src/index.js';
import { alnum, cobroOwnerSchemas, type OwnerSchemas } from './owner-schemas.js';

/**
 * The `cobros` line of `npm run ledger:check` on real Postgres, against a provider's reversal of a matched payment
 * (docs/cobros.md "Reversals"): the schemas of pse-deposit and collect-key made by their own migrations
 * (Database.migrate(), which also creates their read-only roles), rows written as the services write them, and the
 * checker reading them in one snapshot through the read-only roles. A reversed payment is no violation once it is
 * taken off its cobro; one that still counts is, past the horizon (or settled); a cobro that counts a reversed payment,
 * or an excess it should count, is.
 */
describe('cobros: the reversal of a matched payment', () => {
  let owners: OwnerSchemas;
  let client: pg.Client;

  beforeAll(async () => {
    owners = await cobroOwnerSchemas('invcobros');
    client = owners.client;
  }, 120_000);
  afterAll(async () => {
    await owners?.close();
  });

  const check = async (co: string, o: { settled?: boolean } = {}) =>
    violationLines(await checkInvariants(client, { only: ['cobros'], partial: true, rail: 'none', companyId: co, ...o }));

  /** A PSE deposit of the company, as pse-deposit keeps it, last changed `ageSeconds` ago. */
  async function deposit(co: string, amount: bigint, status: string, ageSeconds = 0): Promise<string> {
    const id = `dep_${alnum(24)}`;
    await client.query(
      `insert into pse_deposit.deposits (id, company_id, source, status, amount, net_amount, movement_id, updated_at)
       values ($1, $2, 'PSE', $3, $4::bigint, $4::bigint, gen_random_uuid(), now() - $5::int * interval '1 second')`,
      [id, co, status, amount.toString(), ageSeconds],
    );
    return id;
  }
  /** A FIXED cobro of 100,000 without a dynamic key (its key is another check's), in `state` with `paid`. */
  async function cobro(co: string, state: string, paid: bigint): Promise<string> {
    const id = `cob_${alnum(24)}`;
    await client.query(
      `insert into pse_deposit.cobros (id, company_id, reference, state, amount_type, amount, paid_amount, overpayment_policy, methods, transaction_id,
         request_hash, expires_at, created_at, updated_at)
       values ($1, $2, $3, $4, 'FIXED', 100000, $5::bigint, 'accept', '{PSE}', $6, '[]', now() + interval '1 day', now(), now())`,
      [id, co, `FAC-${alnum(8)}`, state, paid.toString(), `CB${alnum(20).toUpperCase()}`],
    );
    return id;
  }
  async function payment(co: string, cobroId: string, depositId: string, amount: bigint, disposition: string, reversed = 0n): Promise<void> {
    await client.query(
      `insert into pse_deposit.cobro_payments (deposit_id, cobro_id, company_id, source, amount, net_amount, matched_by, disposition, received_at, matched_at,
         reversed_cents)
       values ($1, $2, $3, 'PSE', $4::bigint, $4::bigint - 1190, 'PSE_LINK', $5, now(), now(), $6::bigint)`,
      [depositId, cobroId, co, amount.toString(), disposition, reversed.toString()],
    );
  }

  it('a payment reversed moments ago may still count on its cobro (its event on its way); past the horizon, or settled, it may not', async () => {
    const co = `co-${alnum(8)}`;
    const c = await cobro(co, 'PAID', 100_000n);
    const d = await deposit(co, 100_000n, 'REVERSED');
    await payment(co, c, d, 100_000n, 'COUNTED');
    expect(await check(co)).toEqual([]);
    const still = (age: string) =>
      new RegExp(`^\\[cobros\\] payment ${d} of cobro ${c} \\(company ${co}\\): the deposit was reversed ${age} s ago, but the cobro still takes it as paid`);
    expect(await check(co, { settled: true })).toEqual([expect.stringMatching(still('[01]'))]);
    await client.query(`update pse_deposit.deposits set updated_at = now() - interval '1 hour' where id = $1`, [d]);
    expect(await check(co)).toEqual([expect.stringMatching(still('360[01]'))]);
    // Still being debited back (REVERSING): it counts until it is.
    const c2 = await cobro(co, 'PAID', 100_000n);
    await payment(co, c2, await deposit(co, 100_000n, 'REVERSING', 3600), 100_000n, 'COUNTED');
    expect((await check(co, { settled: true })).filter((v) => v.includes(c2))).toEqual([]);
  });

  it('a reversal taken off its cobro is no violation: the payment marked with its gross, the cobro OPEN with nothing paid', async () => {
    const co = `co-${alnum(8)}`;
    const c = await cobro(co, 'OPEN', 0n);
    await payment(co, c, await deposit(co, 100_000n, 'REVERSED', 3600), 100_000n, 'COUNTED', 100_000n);
    // A payment accepted beyond the amount that now counts, with the reversed one before it.
    const c2 = await cobro(co, 'PAID', 100_000n);
    await payment(co, c2, await deposit(co, 100_000n, 'REVERSED', 3600), 100_000n, 'COUNTED', 100_000n);
    await payment(co, c2, await deposit(co, 100_000n, 'ASSIGNED'), 100_000n, 'COUNTED');
    expect(await check(co, { settled: true })).toEqual([]);
  });

  it('a cobro that still counts a reversed payment, a reversal on a credited payment, a part reversed, an excess left on an open cobro: each is reported', async () => {
    const co = `co-${alnum(8)}`;
    // Marked reversed, but the paid total and the state were left as they were.
    const c1 = await cobro(co, 'PAID', 100_000n);
    await payment(co, c1, await deposit(co, 100_000n, 'REVERSED', 3600), 100_000n, 'COUNTED', 100_000n);
    // Marked reversed while the deposit is still credited; and a part of one.
    const c2 = await cobro(co, 'PARTIALLY_PAID', 40_000n);
    const credited = await deposit(co, 60_000n, 'ASSIGNED');
    await payment(co, c2, credited, 60_000n, 'COUNTED', 60_000n);
    const part = await deposit(co, 40_000n, 'REVERSED', 3600);
    await payment(co, c2, part, 40_000n, 'COUNTED', 10_000n);
    // The payment that paid it reversed, an excess left beside it.
    const c3 = await cobro(co, 'OPEN', 0n);
    await payment(co, c3, await deposit(co, 100_000n, 'REVERSED', 3600), 100_000n, 'COUNTED', 100_000n);
    const excess = await deposit(co, 100_000n, 'ASSIGNED');
    await payment(co, c3, excess, 100_000n, 'EXCESS');
    expect((await check(co)).sort()).toEqual(
      [
        `[cobros] cobro ${c1} (company ${co}) PAID: paid 100000 but its COUNTED payments not reversed sum 0`,
        `[cobros] cobro ${c2} (company ${co}) PARTIALLY_PAID: paid 40000 but its COUNTED payments not reversed sum 0`,
        `[cobros] payment ${credited} of cobro ${c2} (company ${co}): marked reversed on the cobro, but the deposit is ASSIGNED`,
        `[cobros] payment ${part} of cobro ${c2} (company ${co}): 10000 reversed on the cobro, the payment is 40000`,
        `[cobros] payment ${excess} of cobro ${c3} (company ${co}): accepted beyond the amount (EXCESS), but the cobro is OPEN: it should count`,
      ].sort(),
    );
  });
});
