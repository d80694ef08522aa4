import { commitPosting, reservePosting, unassignedInflowPosting } from '../domain/postings.js';
import type { PostingWrite } from '../app/ports.js';
import { batchInsertStatement, postingStatement } from './posting-statement.js';

const co = 'acme';
const ev = { id: 'e', subject: 'ledger.x', payload: { a: 1 } };
const posting = (kind: PostingWrite['posting']['kind']) => ({
  id: 'p',
  kind,
  idempotencyKey: 'k',
  requestHash: 'h',
  companyId: co,
  rail: 'BREB' as const,
  movementId: 'm',
  holdId: 'h1',
});

/** Each CTE of the statement, by name. */
function ctes(sql: string): Map<string, string> {
  const starts = [...sql.matchAll(/(?:with|,)\s*(\w+) as \(/g)];
  const end = sql.search(/\n\s*select \(select count/);
  const out = new Map<string, string>();
  starts.forEach((m, i) => out.set(m[1]!, sql.slice(m.index! + m[0].length, starts[i + 1]?.index ?? end)));
  return out;
}

describe('posting statement', () => {
  it('a reserve is guarded by the conditional wallet update, and every write depends on the guard', () => {
    const d = reservePosting(co, 'BREB', { amount: 100n, fee: 5n, iva: 1n });
    const { sql, params } = postingStatement({
      posting: posting('reserve'),
      entries: d.entries,
      wallet: d.wallet,
      event: ev,
      newHold: {
        id: 'h1',
        companyId: co,
        rail: 'BREB',
        amount: 100n,
        fee: 5n,
        iva: 1n,
        total: 106n,
        fixedFee: 5n,
        feeOperation: 'BREB_OUTFLOW',
        movementId: 'm',
      },
      newMovement: {
        id: 'm',
        companyId: co,
        type: 'TRANSFER_OUT',
        rail: 'BREB',
        walletRail: 'BREB',
        status: 'PENDING',
        amount: 100n,
        totalFee: 5n,
        ivaAmount: 1n,
        netAmount: 95n,
        reference: null,
        apiKeyId: null,
        details: {},
        completed: false,
      },
    });
    expect(sql.split('?').length - 1).toBe(params.length);
    const c = ctes(sql);
    expect([...c.keys()]).toEqual(['g', 'p', 'jq', 'e', 'm', 'h', 'o']);
    expect(c.get('g')).toMatch(
      /^update ledger\.wallets set available_cents = available_cents - \?::bigint, pending_out_cents = pending_out_cents \+ \?::bigint, version = version \+ 1\s+where company_id = \? and rail = \? and available_cents >= \?::bigint returning/,
    );
    for (const name of ['p', 'jq', 'e', 'm', 'h', 'o']) expect(c.get(name)).toMatch(/\bfrom g\b/);
    expect(params.slice(0, 5)).toEqual(['106', '106', co, 'BREB', '106']);
  });

  it('a commit is guarded by the hold still being OPEN; the wallet and movement updates wait on it', () => {
    const d = commitPosting(co, 'BREB', 'BREB_OUTFLOW', { amount: 100n, fee: 5n, iva: 1n });
    const { sql, params } = postingStatement({
      posting: posting('commit'),
      entries: d.entries,
      wallet: d.wallet,
      event: ev,
      closeHold: { id: 'h1', companyId: co, status: 'COMMITTED' },
      movementUpdate: { id: 'm', companyId: co, status: 'COMPLETED', completed: true, errorMessage: null },
    });
    expect(sql.split('?').length - 1).toBe(params.length);
    const c = ctes(sql);
    expect(c.get('g')).toMatch(/^update ledger\.holds set status = \?, closed_at = now\(\)\s+where id = \?::uuid and company_id = \? and status = 'OPEN'/);
    expect(c.get('w')).toMatch(
      /^update ledger\.wallets set pending_out_cents = pending_out_cents - \?::bigint, version = version \+ 1\s+where company_id = \? and rail = \? and exists \(select 1 from g\)/,
    );
    expect(c.get('m')).toMatch(/^update ledger\.movements .* and exists \(select 1 from g\)/s);
  });

  it('an unassigned inflow touches no wallet: a constant guard', () => {
    const d = unassignedInflowPosting(700n);
    const { sql } = postingStatement({ posting: { ...posting('inflow'), movementId: null, holdId: null }, entries: d.entries, wallet: null, event: ev });
    expect(ctes(sql).get('g')).toMatch(/^select 1 as one\)/);
    expect(sql).not.toMatch(/ledger\.wallets/);
  });

  it('a batch is one statement of array parameters: the same 39 binds for 1 or 10,000 postings, one array element per row', () => {
    const write = (i: number) => {
      const d = reservePosting(co, 'BREB', { amount: 100n, fee: 5n, iva: 1n });
      return {
        posting: { ...posting('reserve'), id: `p${i}`, idempotencyKey: `k${i}`, movementId: `m${i}`, holdId: `h${i}` },
        entries: d.entries,
        event: { ...ev, id: `e${i}` },
        newHold: {
          id: `h${i}`,
          companyId: co,
          rail: 'BREB' as const,
          amount: 100n,
          fee: 5n,
          iva: 1n,
          total: 106n,
          fixedFee: 5n,
          feeOperation: 'BREB_OUTFLOW' as const,
          movementId: `m${i}`,
        },
        newMovement: {
          id: `m${i}`,
          companyId: co,
          type: 'TRANSFER_OUT' as const,
          rail: 'BREB' as const,
          walletRail: 'BREB' as const,
          status: 'PENDING' as const,
          amount: 100n,
          totalFee: 5n,
          ivaAmount: 1n,
          netAmount: 95n,
          reference: null,
          apiKeyId: null,
          details: { batchId: 'b1' },
          completed: false,
        },
      };
    };
    const wallets = [{ rail: 'BREB' as const, availableDelta: -106n, pendingOutDelta: 106n, postings: 1 }];
    const one = batchInsertStatement({ companyId: co, wallets, postings: [write(0)] });
    const many = batchInsertStatement({ companyId: co, wallets, postings: Array.from({ length: 10_000 }, (_, i) => write(i)) });
    expect(one.sql).toBe(many.sql);
    expect(one.params).toHaveLength(39);
    expect(many.params).toHaveLength(39);
    expect(Math.max(...[...one.sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))).toBe(39);
    expect(one.sql).not.toMatch(/\?/);
    expect([...ctes(many.sql).keys()]).toEqual(['p', 'jq', 'e', 'o', 'h', 'm']);
    // postings (8 arrays after the company; the journal queue reads the ids again), entries (two per reserve), outbox, holds, movements
    expect((many.params[1] as string[]).length).toBe(10_000);
    expect(many.params[9]).toHaveLength(20_000);
    expect(many.params[11]).toEqual(expect.arrayContaining([`wallet_available:${co}:BREB`, `wallet_pending_out:${co}:BREB`]));
    expect(many.params[13]).toEqual(Array.from({ length: 10_000 }, (_, i) => `e${i}`));
    expect(many.params[17]).toEqual(Array.from({ length: 10_000 }, (_, i) => `h${i}`));
    expect((one.params[37] as string[])[0]).toBe('{"batchId":"b1"}');
    expect(many.params[38]).toHaveLength(10_000);
    expect(() => batchInsertStatement({ companyId: 'other', wallets, postings: [write(0)] })).toThrow(/one company/);
  });
});
