import { PseSettlements, type PseLeg, type PseSettlementReader } from './settlements.js';

/** The two legs' keyset reads merged into the engine's key order, whatever the page size. */
const leg = (ourId: string, direction: 'IN' | 'OUT'): PseLeg => ({
  ourId,
  providerId: null,
  status: direction === 'IN' ? 'ASSIGNED' : ourId.startsWith('ret_') ? 'REFUNDED' : 'REVERSED',
  direction,
  amountCents: 1n,
  settledAt: new Date(0),
  companyId: 'co',
});

function reader(payments: string[], reversals: string[], calls: string[] = [], refunds: string[] = []): PseSettlementReader {
  const page = (all: string[], dir: 'IN' | 'OUT', after: string | null, limit: number) =>
    all
      .filter((id) => after === null || id > after)
      .slice(0, limit)
      .map((id) => leg(id, dir));
  return {
    paymentLegs: async (_d, after, limit) => {
      calls.push(`p:${after}`);
      return page(payments, 'IN', after, limit);
    },
    reversalLegs: async (_d, after, limit) => {
      calls.push(`r:${after}`);
      return page(reversals, 'OUT', after, limit);
    },
    refundLegs: async (_d, after, limit) => {
      calls.push(`f:${after}`);
      return page(refunds, 'OUT', after, limit);
    },
    find: async () => [],
  };
}

async function all(s: PseSettlements, batch: number): Promise<string[][]> {
  const out: string[][] = [];
  for await (const b of s.list('pse', '2025-03-14', batch)) out.push(b.map((l) => `${l.ourId}/${l.direction}`));
  return out;
}

describe('PseSettlements.list', () => {
  const payments = ['dep_a', 'dep_b', 'dep_d', 'dep_e'];
  const reversals = ['dep_b', 'dep_c', 'dep_e'];
  const expected = ['dep_a/IN', 'dep_b/IN', 'dep_b/OUT', 'dep_c/OUT', 'dep_d/IN', 'dep_e/IN', 'dep_e/OUT'];

  it.each([1, 2, 3, 7, 1000])('merges the legs by (id, payment first) in batches of %i', async (n) => {
    const batches = await all(new PseSettlements(reader(payments, reversals)), n);
    expect(batches.flat()).toEqual(expected);
    for (const b of batches.slice(0, -1)) expect(b).toHaveLength(n);
  });

  it('reads page after page from the last id of each leg', async () => {
    const calls: string[] = [];
    await all(new PseSettlements(reader(payments, reversals, calls)), 2);
    expect(calls).toEqual(['p:null', 'r:null', 'f:null', 'p:dep_b', 'r:dep_c', 'p:dep_e']);
  });

  const refunds = ['ret_a', 'ret_b', 'ret_c'];
  it.each([1, 2, 3, 10])('merges the refunds (one OUT leg per return, by return id) after the deposits in batches of %i', async (n) => {
    const batches = await all(new PseSettlements(reader(payments, reversals, [], refunds)), n);
    expect(batches.flat()).toEqual([...expected, 'ret_a/OUT', 'ret_b/OUT', 'ret_c/OUT']);
    for (const b of batches.slice(0, -1)) expect(b).toHaveLength(n);
  });

  it('a day with refunds only', async () => {
    expect((await all(new PseSettlements(reader([], [], [], refunds)), 2)).flat()).toEqual(['ret_a/OUT', 'ret_b/OUT', 'ret_c/OUT']);
  });

  it('an empty day is no batch; a bad rail or date is INVALID_REQUEST', async () => {
    expect(await all(new PseSettlements(reader([], [])), 10)).toEqual([]);
    await expect(all(new PseSettlements(reader([], [])), 0).then(() => 0)).resolves.toBe(0);
    const s = new PseSettlements(reader([], []));
    await expect(
      (async () => {
        for await (const _ of s.list('breb', '2025-03-14')) {
          /* none */
        }
      })(),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(
      (async () => {
        for await (const _ of s.list('pse', '2025-02-29')) {
          /* none */
        }
      })(),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });
});

describe('PseSettlements.find', () => {
  it('looks up deposits and returns (refunds) by id, ignoring anything else, in key order', async () => {
    const asked: string[][] = [];
    const dep = `dep_${'a'.repeat(24)}`;
    const ret = `ret_${'b'.repeat(24)}`;
    const s = new PseSettlements({
      ...reader([], []),
      find: async (ids) => {
        asked.push([...ids]);
        return [leg(ret, 'OUT'), leg(dep, 'OUT'), leg(dep, 'IN')];
      },
    });
    const found = await s.find('pse', [ret, dep, 'dep_short', 'tx-1', ret]);
    expect(asked).toEqual([[ret, dep]]);
    expect(found.map((l) => `${l.ourId}/${l.direction}`)).toEqual([`${dep}/IN`, `${dep}/OUT`, `${ret}/OUT`]);
    expect(await s.find('pse', ['nope'])).toEqual([]);
  });
});
