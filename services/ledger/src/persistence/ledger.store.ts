import { createHash } from 'node:crypto';
import {
  TableCopy,
  appendOutbox,
  type Instant,
  centsFromDb,
  isRetryableTxError,
  isUniqueViolation,
  type Database,
  type Logger,
  type PreparedTx,
} from '@wallet/platform';
import type {
  BalanceAlertEventRecord,
  BalanceAlertPlan,
  BalanceAlertRecord,
  DueBalanceAlert,
  BalanceAt,
  BatchOutcome,
  BatchPostingWrite,
  CommitBatchOutcome,
  RefusedWallet,
  StatementCursor,
  StatementLineRow,
  FeeConfigRecord,
  HoldView,
  InflowReturns,
  JournalCheckOptions,
  JournalCheckReport,
  JournalCut,
  LedgerStore,
  MovementCursor,
  MovementFilter,
  MovementPage,
  OutboxEvent,
  LiveCorrection,
  PostingOutcome,
  PostingWrite,
  StoredPosting,
  WalletBalance,
} from '../app/ports.js';
import type { BalanceAlertKind, BalanceAlertSettings, BalanceAlertState } from '../domain/balance-alerts.js';
import type { FeeSchedule } from '../domain/fees.js';
import type { Movement, MovementStatus } from '../domain/movements.js';
import type { PostingKind, StoredPostingKind } from '../domain/postings.js';
import { WALLET_RAILS, type FeeOperation, type WalletRail } from '../domain/rails.js';
import { checkInvariants } from './invariants.js';
import { batchCommitStatement, batchInsertStatement, postingStatement } from './posting-statement.js';
import {
  holdCols,
  insertedHold,
  insertedMovement,
  isoUs,
  movementCols,
  toHold,
  toMovement,
  toWallet,
  type HoldRow,
  type MovementRow,
  type WalletRow,
} from './rows.js';

/** The `pg` pool under MikroORM: used for the posting statement, as a named prepared statement. */
interface NativePool {
  query<R>(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

/** Rolls a batch's transaction back when a wallet refuses its debit (caught, never leaves the store). */
class BatchRefused extends Error {
  constructor(readonly refused: RefusedWallet[]) {
    super('batch refused by its wallets');
  }
}

/** The ledger's storage on Postgres (schema `ledger`), in plain SQL: every balance change is one conditional statement. */
export class SqlLedgerStore implements LedgerStore {
  private pool: Promise<NativePool> | undefined;
  /** The fee schedules' in-memory copy, kept current by their change feed (`watchFeeConfigs`). */
  private readonly fees: TableCopy<Map<string, FeeSchedule>>;
  private readonly statementNames = new Map<string, string>();

  constructor(private readonly db: Database) {
    this.fees = new TableCopy(db, 'ledger_fees', async () => {
      const rows = await this.run<{ operation: FeeOperation; company_id: string | null; fixed_fee_cents: string; variable_bps: number }>(
        'select operation, company_id, fixed_fee_cents::text as fixed_fee_cents, variable_bps from ledger.fee_configs',
      );
      return new Map(
        rows.map((r) => [`${r.operation}|${r.company_id ?? ''}`, { fixedFeeCents: centsFromDb(r.fixed_fee_cents), variableBps: Number(r.variable_bps) }]),
      );
    });
  }

  /**
   * Single statements outside a transaction run as named prepared statements on the pool under
   * MikroORM: each is parsed and planned once per connection, then only bound and executed.
   * On the hot path (every send reserves) planning the multi-CTE posting statement costs more than
   * running it, and MikroORM's `execute` inlines parameters into the text, so it would re-plan
   * every call. Placeholders are `?` as everywhere else; values must be plain (strings, numbers,
   * booleans, null, arrays).
   */
  private async run<R = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> {
    this.pool ??= (this.db.orm.em.getConnection() as unknown as { getNativeClient(): Promise<NativePool> }).getNativeClient();
    let i = 0;
    const text = sql.replace(/\?/g, () => `$${++i}`);
    let name = this.statementNames.get(text);
    if (!name) {
      name = `ledger_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      if (this.statementNames.size < 1_000) this.statementNames.set(text, name);
    }
    const res = await (await this.pool).query<R>({ name, text, values: params });
    return res.rows;
  }

  async openWallets(companyId: string, rails: WalletRail[], eventFor: (created: WalletRail[]) => OutboxEvent): Promise<{ created: WalletRail[] }> {
    return this.db.tx(async (tx) => {
      const rows = await tx.query<{ rail: WalletRail }>(
        `insert into ledger.wallets (company_id, rail) select ?, r from unnest(array[?]::text[]) as r
          on conflict (company_id, rail) do nothing returning rail`,
        [companyId, rails],
      );
      const created = rails.filter((r) => rows.some((x) => x.rail === r));
      if (created.length > 0) {
        const e = eventFor(created);
        await appendOutbox(tx, 'ledger', { id: e.id, subject: e.subject, payload: e.payload, ...(e.traceparent ? { traceparent: e.traceparent } : {}) });
      }
      return { created };
    });
  }

  async getWallets(companyId: string): Promise<WalletBalance[]> {
    const rows = await this.run<WalletRow>(
      `select company_id, rail, available_cents::text as available_cents, pending_out_cents::text as pending_out_cents, version::text as version
         from ledger.wallets where company_id = ? order by case rail when 'BREB' then 0 else 1 end`,
      [companyId],
    );
    return rows.map(toWallet);
  }

  async walletsWithSchedules(
    companyId: string,
    operationOf: Readonly<Record<WalletRail, FeeOperation>>,
  ): Promise<Array<WalletBalance & { schedule: FeeSchedule | null }>> {
    // One round trip for the balance read: each wallet with the fee row in effect for its outflow
    // operation (the company's own row first, else the default).
    const rows = await this.run<WalletRow & { fixed_fee_cents: string | null; variable_bps: number | null }>(
      `select w.company_id, w.rail, w.available_cents::text as available_cents, w.pending_out_cents::text as pending_out_cents,
              w.version::text as version, f.fixed_fee_cents::text as fixed_fee_cents, f.variable_bps
         from ledger.wallets w
         left join lateral (
           select fc.fixed_fee_cents, fc.variable_bps from ledger.fee_configs fc
            where fc.operation = case w.rail when 'BREB' then ?::text else ?::text end
              and (fc.company_id is null or fc.company_id = w.company_id)
            order by fc.company_id nulls last limit 1) f on true
        where w.company_id = ? order by case w.rail when 'BREB' then 0 else 1 end`,
      [operationOf.BREB, operationOf.ACH, companyId],
    );
    return rows.map((r) => ({
      ...toWallet(r),
      schedule: r.fixed_fee_cents === null ? null : { fixedFeeCents: centsFromDb(r.fixed_fee_cents), variableBps: Number(r.variable_bps) },
    }));
  }

  async balanceAt(companyId: string, rail: WalletRail, at: Instant): Promise<BalanceAt | null> {
    // The wallet's last balance checkpoint at or before `at` (docs/balance-checkpoints.md: the sums
    // over every posting created before its `through`), plus the company's postings from `through`
    // up to `at` (index postings_company_created_idx: at most a day and a margin of them), each
    // joined to its entries on the wallet's two accounts. Without a checkpoint: from the beginning.
    //
    // Two statements, so that the second one's window is two values the planner sees. As one statement,
    // the window's start was a subquery's result, unknown when planning: the range was estimated at 0.5%
    // of the company's postings (5,000 of a ledger's 1,000,000 when one company holds them all), and the
    // plan was two parallel workers (11 ms) or, without them, a hash join over every entry (560 ms); the
    // same estimate made the generic plan look as good as any and it stayed. Now the estimate is the
    // window's own (14 rows), custom plans stay cheaper than the generic one, and every call is a nested
    // loop over the company's index (0.08 ms). A checkpoint never changes once written (the fence), so
    // reading it apart from the postings after it gives the same sum.
    const [c] = await this.run<{ wallet: boolean; through: string | null; available: string | null; pending: string | null; postings: string | null }>(
      `select exists (select 1 from ledger.wallets w where w.company_id = ? and w.rail = ?) as wallet,
              c.through::text as through, c.available_cents::text as available, c.pending_out_cents::text as pending, c.postings::text as postings
         from (select 1) one
         left join lateral (
           select x.through, x.available_cents, x.pending_out_cents, x.postings from ledger.balance_checkpoints x
            where x.company_id = ? and x.rail = ? and x.through <= ?::timestamptz order by x.through desc limit 1) c on true`,
      [companyId, rail, companyId, rail, at],
    );
    if (!c?.wallet) return null;
    const available = `wallet_available:${companyId}:${rail}`;
    const pending = `wallet_pending_out:${companyId}:${rail}`;
    const [r] = await this.run<{ available: string; pending: string; postings: string }>(
      `select coalesce(sum(e.amount) filter (where e.account = ?), 0)::text as available,
              coalesce(sum(e.amount) filter (where e.account = ?), 0)::text as pending,
              count(distinct p.id)::text as postings
         from ledger.postings p
         join ledger.entries e on e.posting_id = p.id
        where p.company_id = ? and p.created_at >= ?::timestamptz and p.created_at <= ?::timestamptz and e.account in (?, ?)`,
      [available, pending, companyId, c.through ?? '-infinity', at, available, pending],
    );
    return {
      availableCents: BigInt(c.available ?? 0) + BigInt(r!.available),
      pendingOutCents: BigInt(c.pending ?? 0) + BigInt(r!.pending),
      postings: BigInt(c.postings ?? 0) + BigInt(r!.postings),
    };
  }

  async statementPage(companyId: string, rail: WalletRail, after: StatementCursor, to: Instant, limit: number): Promise<StatementLineRow[]> {
    // The company's postings in keyset order (index postings_company_created_idx), each summed over
    // its own entries (by primary key); kept when it has a line on the wallet's available account
    // (a sum over no entry is null). The fee and IVA of a line: what the posting booked on
    // fee_revenue / iva_payable (fee charges, inflows and their reversals), plus, for a reserve, its
    // hold's fee and IVA (booked at the commit, which is no line) and, for a release, minus them (given back).
    // A line's movement is one lookup by primary key: the posting's, or for a move (docs/wallet-moves.md)
    // its leg on this wallet (a move's two legs are on its two wallets); the subquery runs for moves only.
    const rows = await this.run<
      MovementRow & {
        posting_id: string;
        posting_kind: string;
        posted_at: string;
        effect: string;
        fee: string;
        iva: string;
        movement_found: boolean;
      }
    >(
      `with page as (
         select p.id, p.kind, p.created_at, p.movement_id, x.effect, x.fee, x.iva,
                case p.kind when 'reserve' then coalesce(h.fee, 0) when 'release' then -coalesce(h.fee, 0) else 0 end as hold_fee,
                case p.kind when 'reserve' then coalesce(h.iva, 0) when 'release' then -coalesce(h.iva, 0) else 0 end as hold_iva
           from ledger.postings p
           cross join lateral (
             select sum(e.amount) filter (where e.account = ?) as effect,
                    coalesce(sum(e.amount) filter (where starts_with(e.account, 'fee_revenue:')), 0) as fee,
                    coalesce(sum(e.amount) filter (where e.account = 'iva_payable'), 0) as iva
               from ledger.entries e where e.posting_id = p.id) x
           left join ledger.holds h on h.id = p.hold_id
          where p.company_id = ? and p.created_at <= ?::timestamptz
            and (p.created_at, p.id) > (?::timestamptz, ?::uuid) and x.effect is not null
          order by p.created_at, p.id
          limit ?)
       select pg.id::text as posting_id, pg.kind as posting_kind, ${isoUs('pg.created_at')} as posted_at,
              pg.effect::text as effect, (pg.fee + pg.hold_fee)::text as fee, (pg.iva + pg.hold_iva)::text as iva,
              (m.id is not null) as movement_found, ${movementCols('m.')}
         from page pg
         left join ledger.movements m on m.id = case when pg.kind = 'move'
           then (select x.id from ledger.movements x where x.company_id = ? and x.move_id = pg.id and x.wallet_rail = ?)
           else pg.movement_id end
        order by pg.created_at, pg.id`,
      [`wallet_available:${companyId}:${rail}`, companyId, to, after.createdAt, after.id, limit, companyId, rail],
    );
    return rows.map((r) => ({
      postingId: r.posting_id,
      postingKind: r.posting_kind,
      postedAt: r.posted_at,
      effectCents: BigInt(r.effect),
      feeCents: BigInt(r.fee),
      ivaCents: BigInt(r.iva),
      movement: r.movement_found ? toMovement(r) : null,
    }));
  }

  async walletExists(companyId: string, rail: WalletRail): Promise<boolean> {
    const rows = await this.run('select 1 from ledger.wallets where company_id = ? and rail = ?', [companyId, rail]);
    return rows.length > 0;
  }

  async recordPosting(write: PostingWrite): Promise<PostingOutcome> {
    const { sql, params } = postingStatement(write);
    type Row = { applied: number; now: string; movement: MovementRow | null; hold: HoldRow | null };
    let rows: Row[];
    try {
      if (write.counterWallet) {
        // A move: both wallets locked in rail order first (as ReserveBatch does), so two opposite
        // moves of a company never deadlock; a missing wallet writes nothing (the caller says which).
        const cw = write.counterWallet;
        rows = await this.db.preparedTx(async (tx) => {
          const locked = await tx.query<{ rail: string }>(
            'select rail from ledger.wallets where company_id = ? and rail = any(?::text[]) order by rail for update',
            [cw.companyId, [write.wallet!.rail, cw.rail]],
          );
          return locked.length === 2 ? tx.query<Row>(sql, params) : [];
        });
      } else if (write.returnClaim && write.returnClaim.delta > 0n) {
        // A return's Reserve: its claim on the inflow may apply while the wallet refuses the debit;
        // the transaction is then rolled back so that nothing stays written.
        rows = await this.db
          .preparedTx(async (tx) => {
            const r = await tx.query<Row>(sql, params);
            if (!r[0] || Number(r[0].applied) === 0) throw new ClaimRolledBack();
            return r;
          })
          .catch((err: unknown) => {
            if (err instanceof ClaimRolledBack) return [] as Row[];
            throw err;
          });
      } else {
        rows = await this.run(sql, params);
      }
    } catch (err) {
      if (isUniqueViolation(err)) return { status: 'duplicate' };
      throw err;
    }
    const r = rows[0];
    if (!r || Number(r.applied) === 0) return { status: 'not_applied' };
    const now = r.now;
    const movement = r.movement ? toMovement(r.movement) : write.newMovement ? insertedMovement(write.newMovement, now) : null;
    const hold = r.hold ? toHold(r.hold) : write.newHold ? insertedHold(write.newHold, now) : null;
    return { status: 'applied', movement, hold, ...(write.counterMovement ? { counterMovement: insertedMovement(write.counterMovement, now) } : {}) };
  }

  async findPosting(idempotencyKey: string): Promise<StoredPosting | undefined> {
    const rows = await this.run<{
      id: string;
      kind: StoredPostingKind;
      request_hash: string;
      company_id: string;
      movement_id: string | null;
      hold_id: string | null;
    }>(
      `select id::text as id, kind, request_hash, company_id, movement_id::text as movement_id, hold_id::text as hold_id
         from ledger.postings where idempotency_key = ?`,
      [idempotencyKey],
    );
    const r = rows[0];
    return r && { id: r.id, kind: r.kind, requestHash: r.request_hash, companyId: r.company_id, movementId: r.movement_id, holdId: r.hold_id };
  }

  async findPostings(idempotencyKeys: string[]): Promise<Map<string, StoredPosting>> {
    const rows = await this.run<{
      key: string;
      id: string;
      kind: StoredPostingKind;
      request_hash: string;
      company_id: string;
      movement_id: string | null;
      hold_id: string | null;
    }>(
      `select idempotency_key as key, id::text as id, kind, request_hash, company_id, movement_id::text as movement_id, hold_id::text as hold_id
         from ledger.postings where idempotency_key = any(?::text[])`,
      [idempotencyKeys],
    );
    return new Map(
      rows.map((r) => [r.key, { id: r.id, kind: r.kind, requestHash: r.request_hash, companyId: r.company_id, movementId: r.movement_id, holdId: r.hold_id }]),
    );
  }

  /**
   * A batch in one transaction: per wallet, in the order given (rail order: every batch locks a
   * company's wallets in the same order, so two batches never deadlock on them), ONE conditional
   * update by the sum of its postings (`available_cents >= debit`, version + their count); then every
   * row of every posting in ONE statement of array parameters (unnest), whatever the batch's size
   * (no per-item statements, no bind-parameter limit). A refused wallet or a taken unique key rolls
   * everything back. A deadlock or serialization failure (a twin batch inserting the same keys in
   * another order) is retried: the whole transaction again.
   */
  async recordPostingBatch(write: BatchPostingWrite): Promise<BatchOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.preparedTx((tx) => this.applyBatch(tx, write));
      } catch (err) {
        if (err instanceof BatchRefused) return { status: 'not_applied', refused: err.refused };
        if (isUniqueViolation(err)) return { status: 'duplicate' };
        if (attempt < 3 && isRetryableTxError(err)) continue;
        throw err;
      }
    }
  }

  private async applyBatch(tx: PreparedTx, b: BatchPostingWrite): Promise<BatchOutcome> {
    const refused: RefusedWallet[] = [];
    for (const w of b.wallets) {
      const debit = w.availableDelta < 0n ? -w.availableDelta : 0n;
      if (refused.length === 0 && (await this.debitWallet(tx, b.companyId, w, debit))) continue;
      // Refused (or another wallet already was): why, from the row as it is now, locked so that it
      // cannot move before this transaction ends (rail order, as above).
      const row = await tx.one<{ available: string }>(
        'select available_cents::text as available from ledger.wallets where company_id = ? and rail = ? for update',
        [b.companyId, w.rail],
      );
      if (!row) refused.push({ rail: w.rail, missing: true });
      else if (BigInt(row.available) < debit) refused.push({ rail: w.rail, missing: false, requiredCents: debit, availableCents: BigInt(row.available) });
      else if (refused.length === 0 && !(await this.debitWallet(tx, b.companyId, w, debit))) {
        // Covered now (a credit committed between the guard and the read) and locked: the guard must hold.
        throw new Error(`wallet ${w.rail} refused a covered debit while locked`);
      }
    }
    if (refused.length > 0) throw new BatchRefused(refused);
    const { sql, params } = batchInsertStatement(b);
    const [counts] = await tx.query<{ postings: number }>(sql, params);
    if (Number(counts?.postings) !== b.postings.length) throw new Error(`batch wrote ${counts?.postings} of ${b.postings.length} postings`);
    return { status: 'applied' };
  }

  /**
   * Many commits of one company's send holds in ONE transaction (CommitBatch). Each hold is closed
   * only as its write's `closeHold.expect` says (OPEN, the same columns, its movement committable),
   * locked in hold id order (two batches never deadlock on holds; holds before wallets, as a single
   * Commit's statement takes them); the others are left as they are. Each wallet then changes once,
   * by the sum of the closed holds' changes (rail order), and the closed holds' rows are written in
   * one statement. A deadlock or serialization failure retries the whole transaction; a taken
   * idempotency key writes nothing ('duplicate').
   */
  async commitHoldBatch(companyId: string, writes: PostingWrite[]): Promise<CommitBatchOutcome> {
    if (writes.length === 0) return { status: 'applied', completedAt: new Map() };
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.preparedTx((tx) => this.applyCommitBatch(tx, companyId, writes));
      } catch (err) {
        if (isUniqueViolation(err)) return { status: 'duplicate' };
        if (attempt < 3 && isRetryableTxError(err)) continue;
        throw err;
      }
    }
  }

  private async applyCommitBatch(tx: PreparedTx, companyId: string, writes: PostingWrite[]): Promise<CommitBatchOutcome> {
    const x = writes.map((w) => {
      const e = w.closeHold?.expect;
      if (!e || w.closeHold!.status !== 'COMMITTED' || w.closeHold!.companyId !== companyId)
        throw new Error('a commit batch closes expected holds of its company');
      return { id: w.closeHold!.id, ...e };
    });
    const statuses = [...new Set(x.flatMap((h) => h.movementStatuses))];
    const closed = await tx.query<{ id: string }>(
      `with x as (select * from unnest($2::uuid[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::uuid[])
                    as x(id, rail, amount, fee, iva, fee_operation, movement_id)),
            l as (select h.id from ledger.holds h join x on h.id = x.id
                   where h.company_id = $1 and h.status = 'OPEN' and h.rail = x.rail and h.amount = x.amount and h.fee = x.fee and h.iva = x.iva
                     and h.fee_operation = x.fee_operation and h.movement_id = x.movement_id and h.return_of is null
                     and exists (select 1 from ledger.movements m where m.id = h.movement_id and m.status = any($9::text[]))
                   order by h.id for update of h)
       update ledger.holds h set status = 'COMMITTED', closed_at = now() from l where h.id = l.id returning h.id::text as id`,
      [
        companyId,
        x.map((h) => h.id),
        x.map((h) => h.rail),
        x.map((h) => h.amount.toString()),
        x.map((h) => h.fee.toString()),
        x.map((h) => h.iva.toString()),
        x.map((h) => h.feeOperation),
        x.map((h) => h.movementId),
        statuses,
      ],
    );
    const closedIds = new Set(closed.map((r) => r.id));
    const won = writes.filter((w) => closedIds.has(w.closeHold!.id));
    if (won.length === 0) return { status: 'applied', completedAt: new Map() };
    for (const rail of WALLET_RAILS) {
      const mine = won.filter((w) => w.wallet?.rail === rail);
      if (mine.length === 0) continue;
      const change = {
        rail,
        availableDelta: mine.reduce((s, w) => s + w.wallet!.availableDelta, 0n),
        pendingOutDelta: mine.reduce((s, w) => s + w.wallet!.pendingOutDelta, 0n),
        postings: mine.length,
      };
      if (change.availableDelta < 0n) throw new Error('a commit never debits available');
      if (!(await this.debitWallet(tx, companyId, change, 0n))) throw new Error(`wallet ${rail} of an open hold is missing`);
    }
    const { sql, params } = batchCommitStatement(
      companyId,
      won.map(({ wallet: _w, ...rest }) => rest),
    );
    const [row] = await tx.query<{ postings: number; movements: Array<{ id: string; completedAt: string }> | null }>(sql, params);
    const movements = row?.movements ?? [];
    if (Number(row?.postings) !== won.length || movements.length !== won.length) {
      throw new Error(`commit batch wrote ${row?.postings} postings and ${movements.length} movements for ${won.length} holds`);
    }
    const at = new Map(movements.map((m) => [m.id, m.completedAt]));
    return { status: 'applied', completedAt: new Map(won.map((w) => [w.closeHold!.id, at.get(w.movementUpdate!.id)!])) };
  }

  /** The wallet's one conditional change for a batch: false when the wallet is missing or short. */
  private async debitWallet(tx: PreparedTx, companyId: string, w: BatchPostingWrite['wallets'][number], debit: bigint): Promise<boolean> {
    const rows = await tx.query(
      `update ledger.wallets set available_cents = available_cents + ?::bigint, pending_out_cents = pending_out_cents + ?::bigint,
              version = version + ?::bigint
        where company_id = ? and rail = ? and available_cents >= ?::bigint returning version`,
      [w.availableDelta.toString(), w.pendingOutDelta.toString(), String(w.postings), companyId, w.rail, debit.toString()],
    );
    return rows.length > 0;
  }

  async voidKey(v: { id: string; idempotencyKey: string; requestHash: string; companyId: string; rail: WalletRail }): Promise<StoredPosting> {
    // `on conflict do nothing` waits for a concurrent Reserve holding the same key to commit or
    // roll back: the unique key orders the two, so exactly one of them owns the key.
    // The void posting and its journal queue row in one statement (docs/journal.md).
    await this.run(
      `with p as (
         insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail)
         values (?::uuid, ?, ?, 'void', ?, ?) on conflict (idempotency_key) do nothing returning id)
       insert into ledger.journal_queue (posting_id) select id from p`,
      [v.id, v.idempotencyKey, v.requestHash, v.companyId, v.rail],
    );
    const p = await this.findPosting(v.idempotencyKey);
    if (!p) throw new Error('voided key not found after insert');
    return p;
  }

  async liveCorrection(movement: string): Promise<LiveCorrection | undefined> {
    return (await this.corrections('c.movement = ? and c.reversed_by is null', movement))[0];
  }

  async correctionByKey(idempotencyKey: string): Promise<(LiveCorrection & { reversedBy: string | null }) | undefined> {
    return (await this.corrections('c.idempotency_key = ?', idempotencyKey))[0];
  }

  private async corrections(where: string, param: string): Promise<Array<LiveCorrection & { reversedBy: string | null }>> {
    const rows = await this.run<{
      posting_id: string;
      movement: string;
      case_id: string;
      idempotency_key: string;
      kind: PostingKind;
      company_id: string;
      rail: WalletRail;
      reversed_by: string | null;
      entries: Array<{ account: string; amount: string }>;
    }>(
      `select c.posting_id::text as posting_id, c.movement, c.case_id, c.idempotency_key, p.kind, p.company_id, p.rail, c.reversed_by::text as reversed_by,
              (select json_agg(json_build_object('account', e.account, 'amount', e.amount::text) order by e.seq) from ledger.entries e where e.posting_id = p.id) as entries
         from ledger.corrections c join ledger.postings p on p.id = c.posting_id where ${where}`,
      [param],
    );
    return rows.map((r) => ({
      postingId: r.posting_id,
      movement: r.movement,
      caseId: r.case_id,
      idempotencyKey: r.idempotency_key,
      kind: r.kind,
      companyId: r.company_id,
      rail: r.rail,
      reversedBy: r.reversed_by,
      entries: r.entries.map((e) => ({ account: e.account, amount: BigInt(e.amount) })),
    }));
  }

  async getHold(companyId: string, holdId: string): Promise<HoldView | undefined> {
    const rows = await this.run<HoldRow & { fee_operation: FeeOperation; movement_status: MovementStatus }>(
      `select ${holdCols('h.')}, h.fee_operation, m.status as movement_status
         from ledger.holds h join ledger.movements m on m.id = h.movement_id
        where h.id = ?::uuid and h.company_id = ?`,
      [holdId, companyId],
    );
    const r = rows[0];
    return r && { ...toHold(r), feeOperation: r.fee_operation, movementStatus: r.movement_status };
  }

  async inflowReturns(companyId: string, movementId: string): Promise<InflowReturns | undefined> {
    const rows = await this.run<{ status: MovementStatus; amount: string; returned_cents: string; rail: 'BREB' | 'PSE'; wallet_rail: WalletRail }>(
      `select status, amount::text as amount, returned_cents::text as returned_cents, rail, wallet_rail
         from ledger.movements where id = ?::uuid and company_id = ? and type = 'TRANSFER_IN'`,
      [movementId, companyId],
    );
    const r = rows[0];
    return (
      r && {
        movementId,
        status: r.status,
        amount: BigInt(r.amount),
        returnedCents: BigInt(r.returned_cents),
        rail: r.rail,
        walletRail: r.wallet_rail,
      }
    );
  }

  /** A move's two legs (docs/wallet-moves.md), the debit (TRANSFER_OUT) first; none for another company's move. */
  async getMoveLegs(companyId: string, moveId: string): Promise<Movement[]> {
    const rows = await this.run<MovementRow>(`select ${movementCols()} from ledger.movements where company_id = ? and move_id = ?::uuid order by type desc`, [
      companyId,
      moveId,
    ]);
    return rows.map(toMovement);
  }

  async getMovement(companyId: string, movementId: string) {
    const rows = await this.run<MovementRow>(`select ${movementCols()} from ledger.movements where id = ?::uuid and company_id = ?`, [movementId, companyId]);
    return rows[0] && toMovement(rows[0]);
  }

  async transitionMovement(companyId: string, movementId: string, from: MovementStatus, to: MovementStatus) {
    const rows = await this.run<MovementRow>(
      `update ledger.movements set status = ?, updated_at = now()
        where id = ?::uuid and company_id = ? and status = ? and type = 'TRANSFER_OUT' and move_id is null returning ${movementCols()}`,
      [to, movementId, companyId, from],
    );
    return rows[0] && toMovement(rows[0]);
  }

  async transitionMovements(companyId: string, movementIds: string[], from: MovementStatus, to: MovementStatus): Promise<number> {
    const rows = await this.run<{ n: number }>(
      `with u as (update ledger.movements set status = ?, updated_at = now()
                   where id = any(?::uuid[]) and company_id = ? and status = ? and type = 'TRANSFER_OUT' and move_id is null returning 1)
       select count(*)::int as n from u`,
      [to, movementIds, companyId, from],
    );
    return rows[0]?.n ?? 0;
  }

  async listMovements(companyId: string, filter: MovementFilter, page: { limit: number; offset: number; after?: MovementCursor }): Promise<MovementPage> {
    const where: string[] = ['company_id = ?'];
    const params: unknown[] = [companyId];
    if (filter.type) {
      where.push('type = ?');
      params.push(filter.type);
    }
    if (filter.rail) {
      where.push('rail = ?');
      params.push(filter.rail);
    }
    if (filter.from) {
      where.push('created_at >= ?::timestamptz');
      params.push(filter.from);
    }
    if (filter.to) {
      where.push('created_at <= ?::timestamptz');
      params.push(filter.to);
    }
    if (page.after) {
      where.push('(created_at, id) < (?::timestamptz, ?::uuid)');
      params.push(page.after.createdAt, page.after.id);
    }
    // The order names the table's columns (m.): the select list's `created_at` and `id` are text, and an
    // order by them could not follow the index (company_id, created_at desc, id desc); every row of the
    // company would be read and sorted for each page.
    const rows = await this.run<MovementRow & { cursor_ts: string }>(
      `select ${movementCols()}, ${isoUs('created_at')} as cursor_ts from ledger.movements m
        where ${where.join(' and ')} order by m.created_at desc, m.id desc limit ? offset ?`,
      [...params, page.limit + 1, page.offset],
    );
    const hasMore = rows.length > page.limit;
    return {
      items: rows.slice(0, page.limit).map((r) => ({ ...toMovement(r), cursor: { createdAt: r.cursor_ts, id: r.id } })),
      hasMore,
    };
  }

  /**
   * The schedule in effect per operation: the company's own row first, else the default (company_id
   * null). While the change feed is up (`watchFeeConfigs`) from an in-memory copy of the (small)
   * table; otherwise, and while a change is being reloaded, from the table.
   */
  async feeSchedules(companyId: string | null, operations: FeeOperation[]): Promise<Map<FeeOperation, FeeSchedule>> {
    const out = new Map<FeeOperation, FeeSchedule>();
    if (operations.length === 0) return out;
    const copy = this.fees.current;
    if (copy) {
      for (const op of operations) {
        const s = (companyId !== null ? copy.get(`${op}|${companyId}`) : undefined) ?? copy.get(`${op}|`);
        if (s) out.set(op, s);
      }
      return out;
    }
    const rows = await this.run<{ operation: FeeOperation; fixed_fee_cents: string; variable_bps: number }>(
      `select distinct on (operation) operation, fixed_fee_cents::text as fixed_fee_cents, variable_bps
         from ledger.fee_configs where operation = any(?::text[]) and (company_id is null or company_id = ?::text)
        order by operation, company_id nulls last`,
      [operations, companyId],
    );
    for (const r of rows) out.set(r.operation, { fixedFeeCents: centsFromDb(r.fixed_fee_cents), variableBps: Number(r.variable_bps) });
    return out;
  }

  /**
   * Starts the fee schedules' change feed (LISTEN ledger_fees; a trigger notifies every change at
   * commit): `TableCopy` drops the copy on each notification and reloads it.
   */
  async watchFeeConfigs(log: Pick<Logger, 'warn'>): Promise<void> {
    await this.fees.start(log, 'fee schedule');
  }

  stopWatchingFeeConfigs(): void {
    this.fees.stop();
  }

  async upsertFeeConfig(cfg: { operation: FeeOperation; companyId: string | null; fixedFeeCents: bigint; variableBps: number }): Promise<FeeConfigRecord> {
    const rows = await this.run<{ operation: FeeOperation; company_id: string | null; fixed_fee_cents: string; variable_bps: number; updated_at: string }>(
      `insert into ledger.fee_configs (operation, company_id, fixed_fee_cents, variable_bps) values (?, ?, ?::bigint, ?::int)
       on conflict (operation, company_id) do update
         set fixed_fee_cents = excluded.fixed_fee_cents, variable_bps = excluded.variable_bps, updated_at = now()
       returning operation, company_id, fixed_fee_cents::text as fixed_fee_cents, variable_bps, ${isoUs('updated_at')} as updated_at`,
      [cfg.operation, cfg.companyId, cfg.fixedFeeCents.toString(), cfg.variableBps],
    );
    this.fees.wrote();
    const r = rows[0]!;
    return {
      operation: r.operation,
      companyId: r.company_id,
      fixedFeeCents: centsFromDb(r.fixed_fee_cents),
      variableBps: Number(r.variable_bps),
      updatedAt: new Date(r.updated_at),
    };
  }

  checkInvariants(o: JournalCheckOptions & { record?: boolean } = {}): Promise<JournalCheckReport & { cut?: JournalCut }> {
    return checkInvariants(this.db, o);
  }

  // ---- Balance alerts (docs/balance-alerts.md) ----

  async upsertBalanceAlert(companyId: string, rail: WalletRail, a: BalanceAlertSettings): Promise<void> {
    await this.run(
      `insert into ledger.balance_alerts (company_id, rail, low_cents, high_cents, hysteresis_cents)
       values (?, ?, ?::bigint, ?::bigint, ?::bigint)
       on conflict (company_id, rail) do update
         set low_cents = excluded.low_cents, high_cents = excluded.high_cents, hysteresis_cents = excluded.hysteresis_cents,
             state = case when (balance_alerts.state = 'LOW' and excluded.low_cents = 0) or (balance_alerts.state = 'HIGH' and excluded.high_cents is null)
                          then 'NORMAL' else balance_alerts.state end,
             evaluated_version = -1, updated_at = now()`,
      [companyId, rail, a.low.toString(), a.high === null ? null : a.high.toString(), a.hysteresis.toString()],
    );
  }

  async deleteBalanceAlert(companyId: string, rail: WalletRail): Promise<void> {
    await this.run('delete from ledger.balance_alerts where company_id = ? and rail = ?', [companyId, rail]);
  }

  async balanceAlerts(companyId: string): Promise<BalanceAlertRecord[]> {
    const rows = await this.run<AlertRow & { has_alert: boolean; wallet_exists: boolean; updated_at: string | null }>(
      `select r.rail, a.company_id is not null as has_alert, a.low_cents::text as low_cents, a.high_cents::text as high_cents,
              a.hysteresis_cents::text as hysteresis_cents, coalesce(a.state, 'NORMAL') as state, ${isoUs('a.updated_at')} as updated_at,
              w.company_id is not null as wallet_exists, coalesce(w.available_cents, 0)::text as available_cents, coalesce(w.version, 0)::text as version
         from unnest(array['BREB', 'ACH']::text[]) with ordinality as r(rail, n)
         left join ledger.balance_alerts a on a.company_id = ? and a.rail = r.rail
         left join ledger.wallets w on w.company_id = ? and w.rail = r.rail
        order by r.n`,
      [companyId, companyId],
    );
    return rows.map((r) => ({
      rail: r.rail,
      settings: r.has_alert ? alertSettings(r) : null,
      state: r.state,
      updatedAt: r.has_alert ? r.updated_at : null,
      walletExists: r.wallet_exists,
      availableCents: centsFromDb(r.available_cents),
    }));
  }

  async evaluateBalanceAlerts(limit: number, plan: (a: DueBalanceAlert) => BalanceAlertPlan, only?: { companyId: string; rail: WalletRail }): Promise<number> {
    return this.db.preparedTx(async (tx) => {
      // The wallet row is read, never locked: the posting path is not slowed. Its version is
      // recorded as evaluated, so a posting committed after this read is seen by the next pass.
      // One wallet's alert right after its settings changed (`only`) waits for a pass that holds it
      // instead of skipping it: the answer to the change then reads the state that pass (or this one)
      // decided, never the one before it (a skipped row answered a stale LOW in a full run).
      const due = await tx.query<AlertRow & { company_id: string }>(
        `select a.company_id, a.rail, a.low_cents::text as low_cents, a.high_cents::text as high_cents, a.hysteresis_cents::text as hysteresis_cents,
                a.state, w.available_cents::text as available_cents, w.version::text as version
           from ledger.balance_alerts a join ledger.wallets w on w.company_id = a.company_id and w.rail = a.rail
          where w.version > a.evaluated_version ${only ? 'and a.company_id = ? and a.rail = ?' : ''}
          order by a.updated_at
          limit ?
          for update of a${only ? '' : ' skip locked'}`,
        only ? [only.companyId, only.rail, limit] : [limit],
      );
      let written = 0;
      for (const r of due) {
        const a: DueBalanceAlert = {
          companyId: r.company_id,
          rail: r.rail,
          settings: alertSettings(r),
          state: r.state,
          availableCents: centsFromDb(r.available_cents),
          version: BigInt(r.version),
        };
        const p = plan(a);
        // Locked above; the state guard says the same again (a replica that won it first left another state).
        const won = await tx.query(
          `update ledger.balance_alerts set state = ?, evaluated_version = ?::bigint
            where company_id = ? and rail = ? and state = ? returning 1`,
          [p.state, a.version.toString(), a.companyId, a.rail, a.state],
        );
        if (won.length === 0) continue;
        for (const c of p.crossings) {
          const e = c.record;
          await tx.query(
            `insert into ledger.balance_alert_events
               (id, company_id, rail, kind, state, available_cents, threshold_cents, low_cents, high_cents, hysteresis_cents, wallet_version, occurred_at)
             values (?, ?, ?, ?, ?, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::timestamptz)`,
            [
              e.id,
              e.companyId,
              e.rail,
              e.kind,
              e.state,
              e.availableCents.toString(),
              e.thresholdCents.toString(),
              e.settings.low.toString(),
              e.settings.high === null ? null : e.settings.high.toString(),
              e.settings.hysteresis.toString(),
              e.walletVersion.toString(),
              e.occurredAt,
            ],
          );
          await appendOutbox(tx, 'ledger', {
            id: c.event.id,
            subject: c.event.subject,
            payload: c.event.payload,
            ...(c.event.traceparent ? { traceparent: c.event.traceparent } : {}),
          });
          written++;
        }
      }
      return written;
    });
  }

  async listBalanceAlertEvents(companyId: string, rail: WalletRail | undefined, limit: number, after?: MovementCursor): Promise<BalanceAlertEventRecord[]> {
    const where = ['company_id = ?'];
    const params: unknown[] = [companyId];
    if (rail) {
      where.push('rail = ?');
      params.push(rail);
    }
    if (after) {
      where.push('(occurred_at, id) < (?::timestamptz, ?::uuid)');
      params.push(after.createdAt, after.id);
    }
    const rows = await this.run<
      AlertRow & { id: string; company_id: string; kind: BalanceAlertKind; threshold_cents: string; wallet_version: string; occurred_at: string }
    >(
      `select id, company_id, rail, kind, state, available_cents::text as available_cents, threshold_cents::text as threshold_cents,
              low_cents::text as low_cents, high_cents::text as high_cents, hysteresis_cents::text as hysteresis_cents,
              wallet_version::text as wallet_version, ${isoUs('occurred_at')} as occurred_at
         from ledger.balance_alert_events e where ${where.join(' and ')}
        order by e.occurred_at desc, e.id desc limit ?`,
      [...params, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      companyId: r.company_id,
      rail: r.rail,
      kind: r.kind,
      state: r.state,
      availableCents: centsFromDb(r.available_cents),
      thresholdCents: centsFromDb(r.threshold_cents),
      settings: alertSettings(r),
      walletVersion: BigInt(r.wallet_version),
      occurredAt: r.occurred_at,
    }));
  }
}

interface AlertRow {
  rail: WalletRail;
  low_cents: string;
  high_cents: string | null;
  hysteresis_cents: string;
  state: BalanceAlertState;
  available_cents: string;
  version: string;
}

const alertSettings = (r: Pick<AlertRow, 'low_cents' | 'high_cents' | 'hysteresis_cents'>): BalanceAlertSettings => ({
  low: centsFromDb(r.low_cents ?? '0'),
  high: r.high_cents === null ? null : centsFromDb(r.high_cents),
  hysteresis: centsFromDb(r.hysteresis_cents ?? '0'),
});

/** Thrown inside a return's Reserve transaction to roll back a claim whose debit was refused. */
class ClaimRolledBack extends Error {}
