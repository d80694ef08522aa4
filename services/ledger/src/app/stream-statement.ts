import { compareInstants, instantFromDate, instantMicros, parseInstant } from '@wallet/platform';
import { isWalletRail, type WalletRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { StatementCursor, StatementLineRow } from './ports.js';
import { walletMissing } from './results.js';
import { Problems, requireCompany } from './validation.js';

export const DEFAULT_STATEMENT_BATCH = 500;
export const MAX_STATEMENT_BATCH = 1_000;
/** After every uuid: the first keyset position is "everything created after `from`". */
const LAST_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/**
 * A statement's lines (see StreamStatementRequest in ledger.proto): the company's postings that
 * changed the wallet's available balance, created in (from, to], in (created_at, id) order, one
 * keyset page per batch. The next page is read while the current one is being sent (its cursor is
 * the current page's last line), and never more than that one: Postgres and the sending overlap,
 * and memory stays bounded by two pages whatever the range holds.
 */
export class StreamStatement {
  constructor(private readonly deps: LedgerDeps) {}

  /** Validates (and checks the wallet) before the first batch, so a bad request fails as a whole. */
  async open(
    caller: string | undefined,
    cmd: { rail: string; from: string | undefined; to: string | undefined; batchSize: number },
  ): Promise<AsyncIterable<StatementLineRow[]>> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    if (!isWalletRail(cmd.rail)) p.add('rail', 'must be BREB or ACH');
    // Instants at microsecond precision, compared in Postgres as given: (from, to] holds a line
    // whose postedAt is `to` and not one whose postedAt is `from`.
    const from = cmd.from ? parseInstant(cmd.from) : null;
    const to = cmd.to ? parseInstant(cmd.to) : null;
    if (!from) p.add('from', cmd.from ? 'must be an RFC 3339 instant with its offset' : 'is required');
    if (!to) p.add('to', cmd.to ? 'must be an RFC 3339 instant with its offset' : 'is required');
    else if (compareInstants(to, instantFromDate(this.deps.now())) > 0) p.add('to', 'must not be in the future');
    if (from && to && instantMicros(from) >= instantMicros(to)) p.add('from', 'must be before to');
    const batch = cmd.batchSize === 0 ? DEFAULT_STATEMENT_BATCH : cmd.batchSize;
    if (!Number.isInteger(batch) || batch < 1 || batch > MAX_STATEMENT_BATCH) p.add('batchSize', `must be between 1 and ${MAX_STATEMENT_BATCH}`);
    p.throwIfAny();
    const rail = cmd.rail as WalletRail;
    if (!(await this.deps.store.walletExists(companyId, rail))) throw await walletMissing(this.deps, companyId, rail);
    const store = this.deps.store;
    const page = (after: StatementCursor) => {
      const read = store.statementPage(companyId, rail, after, to!, batch);
      // handled where it is awaited; until then (or if the consumer stops first) not an unhandled rejection
      read.catch(() => {});
      return read;
    };
    return (async function* pages() {
      let next: Promise<StatementLineRow[]> | null = page({ createdAt: from!, id: LAST_UUID });
      while (next) {
        const rows: StatementLineRow[] = await next;
        const last = rows.length === batch ? rows[rows.length - 1]! : null;
        next = last ? page({ createdAt: last.postedAt, id: last.postingId }) : null;
        if (rows.length > 0) yield rows;
      }
    })();
  }
}
