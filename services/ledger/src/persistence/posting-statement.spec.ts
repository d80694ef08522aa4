import { commitPosting, reservePosting, unassignedInflowPosting } from '../domain/postings.js';
import type { PostingWrite } from '../app/ports.js';
import { postingStatement } from './posting-statement.js';

const co = 'acme';
const ev = { id: 'e', subject: 'ledger.x', payload: { a: 1 } };
const posting = (kind: PostingWrite['posting']['kind']) => ({ id: 'p', kind, idempotencyKey: 'k', requestHash: 'h', companyId: co, rail: 'BREB' as const, movementId: 'm', holdId: 'h1' });

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
      posting: posting('reserve'), entries: d.entries, wallet: d.wallet, event: ev,
      newHold: { id: 'h1', companyId: co, rail: 'BREB', amount: 100n, fee: 5n, iva: 1n, total: 106n, feeOperation: 'BREB_OUTFLOW', movementId: 'm' },
      newMovement: { id: 'm', companyId: co, type: 'TRANSFER_OUT', rail: 'BREB', walletRail: 'BREB', status: 'PENDING', amount: 100n, totalFee: 5n, ivaAmount: 1n, netAmount: 95n, reference: null, apiKeyId: null, details: {}, completed: false },
    });
    expect(sql.split('?').length - 1).toBe(params.length);
    const c = ctes(sql);
    expect([...c.keys()]).toEqual(['g', 'p', 'e', 'm', 'h', 'o']);
    expect(c.get('g')).toMatch(/^update ledger\.wallets set available_cents = available_cents - \?::bigint, pending_out_cents = pending_out_cents \+ \?::bigint, version = version \+ 1\s+where company_id = \? and rail = \? and available_cents >= \?::bigint returning/);
    for (const name of ['p', 'e', 'm', 'h', 'o']) expect(c.get(name)).toMatch(/\bfrom g\b/);
    expect(params.slice(0, 5)).toEqual(['106', '106', co, 'BREB', '106']);
  });

  it('a commit is guarded by the hold still being OPEN; the wallet and movement updates wait on it', () => {
    const d = commitPosting(co, 'BREB', 'BREB_OUTFLOW', { amount: 100n, fee: 5n, iva: 1n });
    const { sql, params } = postingStatement({
      posting: posting('commit'), entries: d.entries, wallet: d.wallet, event: ev,
      closeHold: { id: 'h1', companyId: co, status: 'COMMITTED' },
      movementUpdate: { id: 'm', companyId: co, status: 'COMPLETED', completed: true, errorMessage: null },
    });
    expect(sql.split('?').length - 1).toBe(params.length);
    const c = ctes(sql);
    expect(c.get('g')).toMatch(/^update ledger\.holds set status = \?, closed_at = now\(\)\s+where id = \?::uuid and company_id = \? and status = 'OPEN'/);
    expect(c.get('w')).toMatch(/^update ledger\.wallets set pending_out_cents = pending_out_cents - \?::bigint, version = version \+ 1\s+where company_id = \? and rail = \? and exists \(select 1 from g\)/);
    expect(c.get('m')).toMatch(/^update ledger\.movements .* and exists \(select 1 from g\)/s);
  });

  it('an unassigned inflow touches no wallet: a constant guard', () => {
    const d = unassignedInflowPosting(700n);
    const { sql } = postingStatement({ posting: { ...posting('inflow'), movementId: null, holdId: null }, entries: d.entries, wallet: null, event: ev });
    expect(ctes(sql).get('g')).toMatch(/^select 1 as one\)/);
    expect(sql).not.toMatch(/ledger\.wallets/);
  });
});
