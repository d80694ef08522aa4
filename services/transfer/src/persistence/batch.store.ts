import { centsFromDb, currentTraceparent, isUniqueViolation, type Database, type PreparedTx } from '@wallet/platform';
import {
  BATCH_FINAL_STATES,
  FINISHED_ITEM_STATUSES,
  itemStatus,
  type BatchItemDraft,
  type BatchMove,
  type BatchItemRecord,
  type BatchMode,
  type BatchRecord,
  type BatchSource,
  type BatchState,
  type BatchSummary,
  type BatchTotals,
  type ItemStatus,
  type StoredItemStatus,
} from '../domain/batch.js';
import type { LimitUsage } from '../domain/counterparty-limits.js';
import type { Rail } from '../domain/rails.js';
import {
  COUNTED_STATES,
  publicStatus,
  type ApprovalRecord,
  type ApprovalRef,
  type Destination,
  type TransferRecord,
  type TransferState,
} from '../domain/transfer.js';
import type {
  BatchPatch,
  BatchRejectOutcome,
  BatchSignOutcome,
  BatchStore,
  ExecutionPick,
  ExecutionRefusal,
  KeyedBatch,
  OutboxEvent,
  Signer,
  TransferMove,
} from '../app/ports.js';
import type { TransferDataProtection } from './data-protection.js';
import type { BulkMove } from '../domain/transfer-machine.js';
import { addSignature, approve, lockLive, makeDue, markRejected, ms, type ApprovalRow } from './approval.store.js';
import { limitLockKeySql, storedDestination, toTransfer, transitionTransfersStatement, type TransferRow } from './transfer.store.js';

interface BatchRow {
  id: string;
  traceparent?: string | null;
  company_id: string;
  api_key_id: string | null;
  state: BatchState;
  reference: string | null;
  description: string | null;
  mode: BatchMode;
  source: BatchSource;
  item_count: number;
  valid_count: number;
  invalid_count: number;
  iva_applicable: boolean;
  created_at: Date;
  expires_at: Date;
  executed_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  error_message: string | null;
  request_fingerprint: string;
  idempotency_key: string | null;
}

interface ItemRow {
  seq: number;
  line: number | null;
  status: StoredItemStatus;
  rail: Rail | null;
  amount: string;
  fixed_fee: string;
  variable_fee: string;
  subtotal_fee: string;
  iva_amount: string;
  total_charged: string;
  target_name: string;
  target_document: string;
  counterparty_document: string | null;
  reference: string | null;
  description: string | null;
  destination: Destination | null;
  account_number_masked: string | null;
  error_code: string | null;
  error_message: string | null;
  transfer_id: string | null;
  t_state: TransferState | null;
  t_error: string | null;
  t_completed_at: Date | null;
  iva_applicable: boolean;
}

const BATCH_COLS = `id::text as id, company_id, api_key_id, state, reference, description, mode, source, item_count, valid_count,
  invalid_count, iva_applicable, created_at, expires_at, executed_at, completed_at, cancelled_at, error_message, request_fingerprint, idempotency_key, traceparent`;

function toBatch(r: BatchRow): BatchRecord {
  return {
    id: r.id,
    traceparent: r.traceparent ?? null,
    companyId: r.company_id,
    apiKeyId: r.api_key_id,
    state: r.state,
    reference: r.reference,
    description: r.description,
    mode: r.mode,
    source: r.source,
    itemCount: r.item_count,
    validCount: r.valid_count,
    invalidCount: r.invalid_count,
    ivaApplicable: r.iva_applicable,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
    executedAt: r.executed_at ? new Date(r.executed_at) : null,
    completedAt: r.completed_at ? new Date(r.completed_at) : null,
    cancelledAt: r.cancelled_at ? new Date(r.cancelled_at) : null,
    errorMessage: r.error_message,
  };
}

/** The public status SQL of an item (joined with its transfer as `t`). */
const ITEM_STATUS_SQL = `case when i.status <> 'EXECUTED' then i.status
  when t.state = 'COMPLETED' then 'COMPLETED' when t.state in ('FAILED', 'REJECTED') then 'FAILED'
  when t.state in ('AWAITING_APPROVAL', 'EXPIRING') then 'AWAITING_APPROVAL' when t.state = 'EXECUTING' then 'EXECUTING'
  when t.state = 'EXPIRED' then 'EXPIRED' else 'PENDING' end`;

/** A batch's totals and items by status (the part of its summary its items make). */
type ItemsSummary = Pick<BatchSummary, 'totals' | 'byStatus'>;

/** `final_summary` as stored: amounts as decimal strings (JSON has no 64-bit integers). */
interface StoredSummary {
  totals: Array<{ rail: Rail; count: number; amount: string; fee: string; iva: string; total: string }>;
  byStatus: Array<{ status: ItemStatus; count: number; amount: string }>;
}

function toStoredSummary(s: ItemsSummary): StoredSummary {
  return {
    totals: s.totals.map((t) => ({ rail: t.rail, count: t.count, amount: String(t.amount), fee: String(t.fee), iva: String(t.iva), total: String(t.total) })),
    byStatus: s.byStatus.map((x) => ({ status: x.status, count: x.count, amount: String(x.amount) })),
  };
}

function fromStoredSummary(s: StoredSummary): ItemsSummary {
  return {
    totals: s.totals.map((t) => ({ rail: t.rail, count: t.count, amount: BigInt(t.amount), fee: BigInt(t.fee), iva: BigInt(t.iva), total: BigInt(t.total) })),
    byStatus: s.byStatus.map((x) => ({ status: x.status, count: x.count, amount: BigInt(x.amount) })),
  };
}

/** Bulk payouts on Postgres (schema `transfer`), plain SQL: multi-row statements over unnest, never one per item. */
export class SqlBatchStore implements BatchStore {
  constructor(
    private readonly db: Database,
    private readonly protection: TransferDataProtection,
  ) {}

  private q<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    return this.db.prepared<R>(sql, params);
  }

  fingerprint(requestHash: string): string {
    return this.protection.fingerprint(requestHash);
  }

  async findByIdempotencyKey(companyId: string, key: string, requestHash: string): Promise<KeyedBatch | undefined> {
    const rows = await this.q<BatchRow>(`select ${BATCH_COLS} from transfer.batches where company_id = ? and idempotency_key = ?`, [companyId, key]);
    return rows[0] && { batch: toBatch(rows[0]), sameRequest: rows[0].request_fingerprint === this.fingerprint(requestHash) };
  }

  async findByReference(companyId: string, reference: string, requestHash: string): Promise<KeyedBatch | undefined> {
    const rows = await this.q<BatchRow>(`select ${BATCH_COLS} from transfer.batches where company_id = ? and reference = ?`, [companyId, reference]);
    return rows[0] && { batch: toBatch(rows[0]), sameRequest: rows[0].request_fingerprint === this.fingerprint(requestHash) };
  }

  /**
   * The batch, its items and its `batch.validated` event in one transaction. 'REFERENCE_TAKEN' /
   * 'KEY_TAKEN' when a concurrent request made the batch of that reference / key first (nothing written).
   */
  async insert(
    b: BatchRecord,
    requestHash: string,
    idempotencyKey: string | null,
    items: BatchItemDraft[],
    event: OutboxEvent,
  ): Promise<'OK' | 'REFERENCE_TAKEN' | 'KEY_TAKEN'> {
    const stored = items.map((i) => (i.destination ? storedDestination(i.destination, this.protection) : { destination: null, sealed: null, masked: null }));
    try {
      await this.db.preparedTx(async (tx) => {
        await tx.query(
          `insert into transfer.batches (id, company_id, api_key_id, reference, request_fingerprint, idempotency_key, state, mode, source,
             description, item_count, valid_count, invalid_count, iva_applicable, created_at, expires_at, next_attempt_at, traceparent)
           values (?::uuid, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::integer, ?::integer, ?::integer, ?, ?::timestamptz, ?::timestamptz, ?::timestamptz, ?)`,
          [
            b.id,
            b.companyId,
            b.apiKeyId,
            b.reference,
            this.fingerprint(requestHash),
            idempotencyKey,
            b.state,
            b.mode,
            b.source,
            b.description,
            b.itemCount,
            b.validCount,
            b.invalidCount,
            b.ivaApplicable,
            b.createdAt.toISOString(),
            b.expiresAt.toISOString(),
            b.state === 'VALIDATED' ? b.expiresAt.toISOString() : null,
            // The trace that recorded it: the batch sweeper's resumptions link to it.
            currentTraceparent() ?? null,
          ],
        );
        const col = <T>(f: (i: BatchItemDraft, k: number) => T) => items.map(f);
        await tx.query(
          `insert into transfer.batch_items (batch_id, seq, line, status, rail, amount, fixed_fee, variable_fee, subtotal_fee, iva_amount,
             total_charged, target_name, target_document, counterparty_document, reference, description, destination,
             account_number_sealed, account_number_masked, error_code, error_message)
           select ?::uuid, u.* from unnest(?::integer[], ?::integer[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],
             ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::jsonb[], ?::text[], ?::text[], ?::text[], ?::text[]) as u`,
          [
            b.id,
            col((i) => i.seq),
            col((i) => i.line),
            col((i) => i.status),
            col((i) => i.rail),
            col((i) => i.amount.toString()),
            col((i) => (i.fee?.fixedFee ?? 0n).toString()),
            col((i) => (i.fee?.variableFee ?? 0n).toString()),
            col((i) => (i.fee?.subtotalFee ?? 0n).toString()),
            col((i) => (i.fee?.ivaAmount ?? 0n).toString()),
            col((i) => (i.fee?.totalCharged ?? 0n).toString()),
            col((i) => i.targetName),
            col((i) => i.targetDocument),
            col((i) => i.counterparty),
            col((i) => i.reference),
            col((i) => i.description),
            col((_, k) => (stored[k]!.destination ? JSON.stringify(stored[k]!.destination) : null)),
            col((_, k) => stored[k]!.sealed),
            col((_, k) => stored[k]!.masked),
            col((i) => i.errorCode),
            col((i) => i.errorMessage),
          ],
        );
        await outbox(tx, [event]);
      });
    } catch (err) {
      if (isUniqueViolation(err, 'batches_reference_uq')) return 'REFERENCE_TAKEN';
      if (isUniqueViolation(err, 'batches_idempotency_key_uq')) return 'KEY_TAKEN';
      throw err;
    }
    return 'OK';
  }

  async get(companyId: string, id: string): Promise<BatchRecord | undefined> {
    const rows = await this.q<BatchRow>(`select ${BATCH_COLS} from transfer.batches where id = ?::uuid and company_id = ?`, [id, companyId]);
    return rows[0] && toBatch(rows[0]);
  }

  /**
   * Batches with their totals and items by status. A finished batch's summary is the one its move into a final
   * state kept (`final_summary`: it never changes again), read by primary key. The others are one grouped read
   * for all of them: an executed item's transfer carries the item's batch id, so the transfers are read by batch
   * (`transfers_batch_items_idx`, transferOnlineIndexes: one index-only range per batch, hashed against the
   * items) rather than one primary-key probe per item into the whole table; a plan test in
   * batch-summary-plan.test.ts. A finished batch without one (finished before the column) gets it kept here.
   */
  async summaries(batches: BatchRecord[]): Promise<BatchSummary[]> {
    if (batches.length === 0) return [];
    const finished = batches.filter((b) => BATCH_FINAL_STATES.includes(b.state)).map((b) => b.id);
    const kept = finished.length > 0 ? await this.keptSummaries(finished) : new Map<string, ItemsSummary>();
    const rest = batches.filter((b) => !kept.has(b.id));
    const computed = rest.length > 0 ? await this.groupedSummaries(rest) : new Map<string, ItemsSummary>();
    const toKeep = rest.filter((b) => BATCH_FINAL_STATES.includes(b.state));
    if (toKeep.length > 0) await this.keepSummaries(toKeep.map((b) => ({ id: b.id, summary: computed.get(b.id)! })));
    const approvals = await this.approvals(batches.map((b) => b.id));
    return batches.map((b) => {
      const s = kept.get(b.id) ?? computed.get(b.id)!;
      return {
        ...b,
        approval: approvals.get(b.id) ?? null,
        totals: s.totals,
        byStatus: s.byStatus,
        finishedCount: s.byStatus.filter((x) => FINISHED_ITEM_STATUSES.includes(x.status)).reduce((n, x) => n + x.count, 0),
      };
    });
  }

  /** The summaries kept by finished batches (those that have one). */
  private async keptSummaries(ids: string[]): Promise<Map<string, ItemsSummary>> {
    const rows = await this.q<{ id: string; s: StoredSummary }>(
      `select id::text as id, final_summary as s from transfer.batches where id = any(?::uuid[]) and final_summary is not null`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, fromStoredSummary(r.s)]));
  }

  /** Keeps finished batches' summaries computed on read (batches finished before `final_summary`): once each. */
  private async keepSummaries(rows: Array<{ id: string; summary: ItemsSummary }>): Promise<void> {
    await this.q(
      `update transfer.batches b set final_summary = v.s
         from unnest(?::uuid[], ?::jsonb[]) as v(id, s)
        where b.id = v.id and b.final_summary is null and b.state = any(?::text[])`,
      [rows.map((r) => r.id), rows.map((r) => JSON.stringify(toStoredSummary(r.summary))), [...BATCH_FINAL_STATES]],
    );
  }

  /** Totals and items by status, grouped from the items and their transfers, for batches without a kept summary. */
  private async groupedSummaries(batches: BatchRecord[]): Promise<Map<string, ItemsSummary>> {
    // One batch (GetBatch, every look of the batch sweeper) is its own statement: the generic plan of
    // `= any($1)` reckons an array matches many batches' items and reads the whole batch_items table.
    const one = batches.length === 1;
    const which = one ? '= ?::uuid' : '= any(?::uuid[])';
    const ids = one ? batches[0]!.id : batches.map((b) => b.id);
    const rows = await this.q<{
      batch_id: string;
      status: ItemStatus;
      rail: Rail | null;
      counts_total: boolean;
      n: number;
      amount: string;
      fee: string;
      iva: string;
      total: string;
    }>(
      `select i.batch_id::text as batch_id, ${ITEM_STATUS_SQL} as status, i.rail,
              (i.status in ('VALID', 'EXECUTED')) as counts_total,
              count(*)::integer as n, coalesce(sum(i.amount), 0)::text as amount, coalesce(sum(i.subtotal_fee), 0)::text as fee,
              coalesce(sum(i.iva_amount), 0)::text as iva, coalesce(sum(i.total_charged), 0)::text as total
         from transfer.batch_items i
         left join transfer.transfers t on t.batch_id ${which} and t.batch_id = i.batch_id and t.id = i.transfer_id
        where i.batch_id ${which}
        group by 1, 2, 3, 4`,
      [ids, ids],
    );
    return new Map(
      batches.map((b) => {
        const mine = rows.filter((r) => r.batch_id === b.id);
        const byStatus = new Map<ItemStatus, { status: ItemStatus; count: number; amount: bigint }>();
        const totals = new Map<Rail, BatchTotals>();
        for (const r of mine) {
          const s = byStatus.get(r.status) ?? { status: r.status, count: 0, amount: 0n };
          s.count += r.n;
          s.amount += centsFromDb(r.amount);
          byStatus.set(r.status, s);
          if (r.counts_total && r.rail) {
            const t = totals.get(r.rail) ?? { rail: r.rail, count: 0, amount: 0n, fee: 0n, iva: 0n, total: 0n };
            t.count += r.n;
            t.amount += centsFromDb(r.amount);
            t.fee += centsFromDb(r.fee);
            t.iva += centsFromDb(r.iva);
            t.total += centsFromDb(r.amount) + centsFromDb(r.fee) + centsFromDb(r.iva);
            totals.set(r.rail, t);
          }
        }
        return [
          b.id,
          {
            totals: [...totals.values()].sort((x, y) => x.rail.localeCompare(y.rail)),
            byStatus: [...byStatus.values()].sort((x, y) => x.status.localeCompare(y.status)),
          },
        ];
      }),
    );
  }

  /** The approvals of these batches (multi-signature), with their signatures, by batch id. */
  private async approvals(batchIds: string[]): Promise<Map<string, ApprovalRecord>> {
    const rows = await this.q<{
      batch_id: string;
      id: string;
      threshold: number;
      status: ApprovalRecord['status'];
      created_at: Date;
      expires_at: Date;
      decided_at: Date | null;
      reject_reason: string | null;
      rejected_by: string | null;
      signatures: Array<{ userId: string; email: string; role: string; signedAt: string }>;
    }>(
      `select a.batch_id::text as batch_id, a.id, a.threshold, a.status, a.created_at, a.expires_at, a.decided_at, a.reject_reason, a.rejected_by,
              coalesce((select json_agg(json_build_object('userId', s.user_id, 'email', s.email, 'role', s.role, 'signedAt', s.signed_at)
                                        order by s.signed_at, s.user_id)
                          from transfer.approval_signatures s where s.approval_id = a.id), '[]'::json) as signatures
         from transfer.approvals a where a.batch_id = any($1::uuid[])`,
      [batchIds],
    );
    return new Map(
      rows.map((r) => [
        r.batch_id,
        {
          id: r.id,
          threshold: r.threshold,
          status: r.status,
          signatures: r.signatures.map((x) => ({ userId: x.userId, email: x.email, role: x.role, signedAt: new Date(x.signedAt) })),
          createdAt: new Date(r.created_at),
          expiresAt: new Date(r.expires_at),
          decidedAt: r.decided_at ? new Date(r.decided_at) : null,
          rejectReason: r.reject_reason,
          rejectedBy: r.rejected_by,
        },
      ]),
    );
  }

  async list(companyId: string, state: BatchState | null, limit: number, cursor: { createdAt: Date; id: string } | null): Promise<BatchRecord[]> {
    const rows = await this.q<BatchRow>(
      `select ${BATCH_COLS} from transfer.batches
        where company_id = $1 and ($2::text is null or state = $2 or ($2 = 'EXECUTING' and state = 'FUNDING'))
          and ($3::timestamptz is null or (created_at, id) < ($3::timestamptz, $4::uuid))
        order by created_at desc, id desc limit $5`,
      [companyId, state, cursor ? cursor.createdAt.toISOString() : null, cursor?.id ?? null, limit],
    );
    return rows.map(toBatch);
  }

  /** Items in order after `afterSeq`, optionally of one public status. */
  async items(batchId: string, status: ItemStatus | null, afterSeq: number, limit: number): Promise<BatchItemRecord[]> {
    const rows = await this.q<ItemRow>(
      `select i.*, t.state as t_state, t.error_message as t_error, t.completed_at as t_completed_at, b.iva_applicable
         from transfer.batch_items i join transfer.batches b on b.id = i.batch_id
         left join transfer.transfers t on t.id = i.transfer_id
        where i.batch_id = $1::uuid and i.seq > $2 and ($3::text is null or ${ITEM_STATUS_SQL} = $3)
        order by i.seq limit $4`,
      [batchId, afterSeq, status, limit],
    );
    return rows.map((r) => this.toItem(r));
  }

  private toItem(r: ItemRow): BatchItemRecord {
    const destination =
      r.destination && r.destination.kind === 'ACH' ? ({ ...r.destination, accountNumber: r.account_number_masked ?? '' } as Destination) : r.destination;
    const fee = r.rail
      ? {
          fixedFee: centsFromDb(r.fixed_fee),
          variableFee: centsFromDb(r.variable_fee),
          subtotalFee: centsFromDb(r.subtotal_fee),
          ivaApplicable: r.iva_applicable,
          ivaAmount: centsFromDb(r.iva_amount),
          totalCharged: centsFromDb(r.total_charged),
        }
      : null;
    return {
      seq: r.seq,
      line: r.line,
      status: r.status === 'INVALID' ? 'INVALID' : 'VALID',
      storedStatus: r.status,
      rail: r.rail,
      amount: centsFromDb(r.amount),
      fee,
      targetName: r.target_name,
      targetDocument: r.target_document,
      counterparty: r.counterparty_document,
      reference: r.reference,
      description: r.description,
      destination,
      errorCode: r.error_code,
      errorMessage: r.error_message,
      transferId: r.transfer_id,
      transferState: r.t_state ? itemStatus('EXECUTED', publicStatus(r.t_state)) : null,
      transferError: r.t_error,
      completedAt: r.t_completed_at ? new Date(r.t_completed_at) : null,
    };
  }

  /** The items to execute, with their full destinations (account numbers opened). */
  async executableItems(batchId: string): Promise<BatchItemDraft[]> {
    const rows = await this.q<ItemRow & { account_number_sealed: string | null }>(
      `select i.*, null as t_state, null as t_error, null as t_completed_at, b.iva_applicable
         from transfer.batch_items i join transfer.batches b on b.id = i.batch_id
        where i.batch_id = ?::uuid and i.status = 'VALID' order by i.seq`,
      [batchId],
    );
    return rows.map((r) => {
      const item = this.toItem(r);
      const d = r.destination;
      return {
        ...item,
        destination: d && d.kind === 'ACH' ? { ...d, accountNumber: r.account_number_sealed ? this.protection.openAccount(r.account_number_sealed) : '' } : d,
      };
    });
  }

  /** Which of these candidates (normalised documents, destination fingerprints) are on the AML list (one query). */
  async amlHits(candidates: string[]): Promise<Set<string>> {
    if (candidates.length === 0) return new Set();
    const rows = await this.q<{ d: string }>(
      `select distinct coalesce(normalized_document, destination_fingerprint) as d from transfer.aml_entries
        where removed_at is null and (normalized_document = any($1::text[]) or destination_fingerprint = any($1::text[]))`,
      [candidates],
    );
    return new Set(rows.map((r) => r.d));
  }

  /**
   * Day and month usage of many counterparty documents and destination fingerprints (`keys` mixes
   * both: a fingerprint, `hm1:…`, never equals a document), in one query; same states as single sends.
   */
  async limitUsage(companyId: string, keys: string[], windows: { dayStart: Date; monthStart: Date }, tx?: PreparedTx): Promise<Map<string, LimitUsage>> {
    const counted = COUNTED_STATES.map((s) => `'${s}'`).join(', ');
    const sql = `select counterparty_document as c,
            coalesce(sum(amount) filter (where created_at >= $3::timestamptz), 0)::text as day_sum, coalesce(sum(amount), 0)::text as month_sum
       from transfer.transfers
      where company_id = $1 and counterparty_document = any($2::text[]) and created_at >= $4::timestamptz and state in (${counted})
      group by counterparty_document
      union all
     select destination_fingerprint as c,
            coalesce(sum(amount) filter (where created_at >= $3::timestamptz), 0)::text as day_sum, coalesce(sum(amount), 0)::text as month_sum
       from transfer.transfers
      where company_id = $1 and destination_fingerprint = any($2::text[]) and created_at >= $4::timestamptz and state in (${counted})
      group by destination_fingerprint`;
    const params = [companyId, keys, windows.dayStart.toISOString(), windows.monthStart.toISOString()];
    const rows = tx
      ? await tx.query<{ c: string; day_sum: string; month_sum: string }>(sql, params)
      : await this.q<{ c: string; day_sum: string; month_sum: string }>(sql, params);
    return new Map(rows.map((r) => [r.c, { daySum: BigInt(r.day_sum), monthSum: BigInt(r.month_sum) }]));
  }

  /**
   * `execute` (VALIDATED → FUNDING) in ONE transaction, under the counterparty-limit locks single sends
   * take (by bucket, in order: at most 64): the limits are decided again with the usage of the moment
   * (`decide` gets it and answers which items go and which are refused), the items that go are
   * inserted as RECEIVED transfers owned by the batch (no sweeper time: the batch sweeper resumes
   * FUNDING), the refused ones marked REJECTED. A multi-signature company's items carry the batch's
   * one approval (`approval`: opened when the funds are reserved). Undefined when the batch was no longer VALIDATED.
   */
  async startExecution(
    b: BatchRecord,
    execute: BatchMove,
    limitKeys: string[],
    windows: { dayStart: Date; monthStart: Date },
    decide: (usage: Map<string, LimitUsage>) => {
      picks: Array<ExecutionPick & { transfer: TransferRecord; counterparty: string }>;
      refusals: ExecutionRefusal[];
    },
    fundingLeaseMs: number,
    approval: ApprovalRef | null,
  ): Promise<{ picks: ExecutionPick[]; refusals: ExecutionRefusal[] } | undefined> {
    return this.db.preparedTx(async (tx) => {
      const won = await tx.query<{ id: string }>(
        `update transfer.batches set state = $5, executed_at = now(), updated_at = now(), error_message = null,
            next_attempt_at = now() + ($3::bigint * interval '1 millisecond')
          where id = $1::uuid and company_id = $2 and state = any($4::text[]) and expires_at > now() returning id::text as id`,
        [b.id, b.companyId, String(fundingLeaseMs), [...execute.from], execute.to],
      );
      if (won.length === 0) return undefined;
      await tx.query(
        `select pg_advisory_xact_lock(k) from (select distinct ${limitLockKeySql('$1::text', 'c')} as k
        from unnest($2::text[]) as c order by 1) s`,
        [b.companyId, limitKeys],
      );
      const usage = await this.limitUsage(b.companyId, limitKeys, windows, tx);
      const { picks, refusals } = decide(usage);
      if (picks.length > 0) {
        const ts = picks.map((p) => p.transfer);
        const stored = ts.map((t) => storedDestination(t.destination, this.protection));
        const col = <T>(f: (t: TransferRecord, k: number) => T) => ts.map(f);
        await tx.query(
          `with v as (select * from unnest($1::uuid[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],
                $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::jsonb[], $15::text[], $16::text[], $24::text[], $26::jsonb[])
                as v(id, rail, amount, fixed_fee, variable_fee, subtotal_fee, iva_amount, total_charged, target_name, target_document,
                     counterparty_document, reference, description, destination, sealed, masked, destination_fingerprint, policy_decision)),
             t as (insert into transfer.transfers (id, company_id, api_key_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee,
                iva_applicable, iva_amount, total_charged, target_name, target_document, counterparty_document, reference, description, destination,
                next_attempt_at, created_at, account_number_sealed, account_number_masked, batch_id, approval_id, approval_threshold, approval_expires_at,
                destination_fingerprint, traceparent, policy_decision, approval_roles)
              select v.id, $17, $18, v.rail, 'RECEIVED', v.amount, v.fixed_fee, v.variable_fee, v.subtotal_fee, $19, v.iva_amount, v.total_charged,
                     v.target_name, v.target_document, v.counterparty_document, v.reference, v.description, v.destination, null, now(), v.sealed, v.masked, $20::uuid,
                     $21::text, $22::integer, $23::timestamptz, v.destination_fingerprint, $25::text, v.policy_decision, $27::text[]
                from v returning id)
           insert into transfer.state_history (transfer_id, state, reason) select id, 'RECEIVED', 'bulk payout item' from t`,
          [
            col((t) => t.id),
            col((t) => t.rail),
            col((t) => t.amount.toString()),
            col((t) => t.fee.fixedFee.toString()),
            col((t) => t.fee.variableFee.toString()),
            col((t) => t.fee.subtotalFee.toString()),
            col((t) => t.fee.ivaAmount.toString()),
            col((t) => t.fee.totalCharged.toString()),
            col((t) => t.targetName),
            col((t) => t.targetDocument),
            picks.map((p) => p.counterparty),
            col((t) => t.reference),
            col((t) => t.description),
            col((_, k) => JSON.stringify(stored[k]!.destination)),
            col((_, k) => stored[k]!.sealed),
            col((_, k) => stored[k]!.masked),
            b.companyId,
            b.apiKeyId,
            b.ivaApplicable,
            b.id,
            approval?.id ?? null,
            approval?.threshold ?? null,
            approval ? approval.expiresAt.toISOString() : null,
            col((t) => t.destinationFingerprint ?? null),
            // Each item's transfer continues the trace of the execution that made it (else the batch's own).
            currentTraceparent() ?? b.traceparent ?? null,
            col((t) => (t.policyDecision ? JSON.stringify(t.policyDecision) : null)),
            approval?.roles ?? null,
          ],
        );
        await tx.query(
          // The item shows the fee its transfer pays: the schedule in force at execution (validation's was an estimate).
          `update transfer.batch_items i set status = 'EXECUTED', transfer_id = v.tid, error_code = null, error_message = null,
                  fixed_fee = t.fixed_fee, variable_fee = t.variable_fee, subtotal_fee = t.subtotal_fee, iva_amount = t.iva_amount, total_charged = t.total_charged
             from unnest($2::integer[], $3::uuid[]) as v(seq, tid) join transfer.transfers t on t.id = v.tid
            where i.batch_id = $1::uuid and i.seq = v.seq`,
          [b.id, picks.map((p) => p.seq), picks.map((p) => p.transferId)],
        );
      }
      if (refusals.length > 0) {
        await tx.query(
          `update transfer.batch_items i set status = 'REJECTED', error_code = v.code, error_message = v.msg
             from unnest($2::integer[], $3::text[], $4::text[]) as v(seq, code, msg) where i.batch_id = $1::uuid and i.seq = v.seq`,
          [b.id, refusals.map((r) => r.seq), refusals.map((r) => r.code), refusals.map((r) => r.message)],
        );
      }
      return { picks: picks.map((p) => ({ seq: p.seq, transferId: p.transferId })), refusals };
    });
  }

  /** The executed items' transfers, in item order (the ReserveBatch request is rebuilt from them: the same every time). */
  async executedTransfers(batchId: string): Promise<TransferRecord[]> {
    const rows = await this.q<TransferRow>(
      `select t.* from transfer.batch_items i join transfer.transfers t on t.id = i.transfer_id
        where i.batch_id = ?::uuid and i.status = 'EXECUTED' order by i.seq`,
      [batchId],
    );
    return rows.map((r) => toTransfer(r, this.protection));
  }

  /**
   * Many transfers of one batch through ONE event of the send saga's table (the caller checked it),
   * in one statement: compare-and-set per row (state in `from`), history rows, and the outbox event of
   * each row that moved. Returns how many moved.
   */
  async transitionTransfers(batchId: string, move: BulkMove, rows: TransferMove[], nextAttemptNow: boolean, reason: string): Promise<number> {
    if (rows.length === 0) return 0;
    const st = transitionTransfersStatement(batchId, move, rows, nextAttemptNow ? 0 : null, reason);
    return (await this.q<{ id: string }>(st.sql, st.params)).length;
  }

  /**
   * FUNDING → AWAITING_APPROVAL (a multi-signature company's batch, its ReserveBatch landed) in ONE
   * transaction: the batch's compare-and-set (of this execution), its one approval opened, and every
   * item RECEIVED → AWAITING_APPROVAL with its hold and its event. The batch sweeper looks again at the
   * deadline; the items' own sweeper time comes after it (the batch settles them first). Undefined when
   * another writer moved the batch first.
   */
  async awaitApproval(
    b: BatchRecord,
    awaiting: BatchMove,
    approval: ApprovalRef,
    executionOf: string,
    move: BulkMove,
    rows: TransferMove[],
    itemsLookAfterMs: number,
  ): Promise<BatchRecord | undefined> {
    return this.db.preparedTx(async (tx) => {
      const won = await tx.query<BatchRow>(
        `update transfer.batches set state = $3, updated_at = now(), error_message = null, next_attempt_at = $4::timestamptz
          where id = $1::uuid and company_id = $2 and state = any($5::text[])
            and exists (select 1 from transfer.batch_items i where i.batch_id = $1::uuid and i.transfer_id = $6::uuid)
          returning ${BATCH_COLS}`,
        [b.id, b.companyId, awaiting.to, approval.expiresAt.toISOString(), [...awaiting.from], executionOf],
      );
      if (!won[0]) return undefined;
      await tx.query(
        `insert into transfer.approvals (id, batch_id, company_id, threshold, status, expires_at, roles) values ($1, $2::uuid, $3, $4, 'PENDING', $5::timestamptz, $6::text[])`,
        [approval.id, b.id, b.companyId, approval.threshold, approval.expiresAt.toISOString(), approval.roles ?? null],
      );
      const st = transitionTransfersStatement(b.id, move, rows, approval.expiresAt.getTime() - Date.now() + itemsLookAfterMs, 'bulk payout awaiting approval');
      await tx.query(st.sql, st.params);
      return toBatch(won[0]);
    });
  }

  /**
   * A move of the batch saga (made by `BatchSaga`): compare-and-set from `move.from` to `move.to`,
   * with the patch and the event in the same statement. `items` also moves items in the same
   * transaction (cancel/expire: VALID → NOT_EXECUTED; funding refused: EXECUTED/REJECTED → VALID).
   */
  async transition(
    b: { id: string; companyId: string },
    move: BatchMove,
    patch: BatchPatch,
    evt: ((b: BatchRecord) => OutboxEvent) | null,
    items?: 'not_executed' | 'back_to_valid',
  ): Promise<BatchRecord | undefined> {
    const to = move.to;
    return this.db.preparedTx(async (tx) => {
      const rows = await tx.query<BatchRow>(
        `update transfer.batches set state = $3, updated_at = now(),
            error_message = case when $4::boolean then $5 else error_message end,
            next_attempt_at = case when $6::boolean then null when $7::boolean then now() + ($8::bigint * interval '1 millisecond') else next_attempt_at end,
            completed_at = case when $9::boolean then now() else completed_at end,
            cancelled_at = case when $10::boolean then now() else cancelled_at end,
            executed_at = case when $3 = 'VALIDATED' then null else executed_at end,
            final_summary = coalesce($13::jsonb, final_summary)
          where id = $1::uuid and company_id = $2 and state = any($11::text[])
            and ($12::uuid is null or exists (select 1 from transfer.batch_items i where i.batch_id = $1::uuid and i.transfer_id = $12::uuid))
          returning ${BATCH_COLS}`,
        [
          b.id,
          b.companyId,
          to,
          patch.errorMessage !== undefined,
          patch.errorMessage ?? null,
          patch.nextAttemptInMs === null,
          typeof patch.nextAttemptInMs === 'number',
          String(Math.max(0, Math.round(patch.nextAttemptInMs ?? 0))),
          patch.completed === true,
          patch.cancelled === true,
          [...move.from],
          patch.executionOf ?? null,
          patch.finalSummary ? JSON.stringify(toStoredSummary(patch.finalSummary)) : null,
        ],
      );
      const row = rows[0];
      if (!row) return undefined;
      const next = toBatch(row);
      if (items === 'not_executed') {
        await tx.query(`update transfer.batch_items set status = 'NOT_EXECUTED' where batch_id = ?::uuid and status = 'VALID'`, [b.id]);
      } else if (items === 'back_to_valid') {
        await tx.query(
          `update transfer.batch_items set status = 'VALID', transfer_id = null, error_code = null, error_message = null
          where batch_id = ?::uuid and status in ('EXECUTED', 'REJECTED')`,
          [b.id],
        );
      }
      if (evt) await outbox(tx, [evt(next)]);
      return next;
    });
  }

  /** The batch's approval locked for a decision (`lockLive`), or why there is none to decide. */
  private async lockApproval(tx: PreparedTx, companyId: string, batchId: string): Promise<ApprovalRow | 'not_found' | 'no_approval' | 'expired'> {
    const [ref] = await tx.query<{ id: string }>('select id from transfer.approvals where batch_id = $1::uuid and company_id = $2', [batchId, companyId]);
    if (!ref) {
      const [b] = await tx.query<{ id: string }>('select id::text as id from transfer.batches where id = $1::uuid and company_id = $2', [batchId, companyId]);
      return b ? 'no_approval' : 'not_found';
    }
    return lockLive(tx, companyId, ref.id);
  }

  async signApproval(
    companyId: string,
    batchId: string,
    signer: Signer,
    approved: BatchMove,
    quorum: BulkMove,
    approvedEvent: (t: TransferRecord, signerEmails: string[]) => OutboxEvent,
    batchLookInMs: number,
    precheck: boolean,
  ): Promise<BatchSignOutcome> {
    return this.db.preparedTx(async (tx): Promise<BatchSignOutcome> => {
      const a = await this.lockApproval(tx, companyId, batchId);
      if (typeof a === 'string') return { kind: a };
      const added = await addSignature(tx, a, signer, precheck);
      if (added.kind !== 'added') return added;
      if (added.count < a.threshold) return { kind: 'signed', quorum: false };
      const emails = await approve(tx, a.id);
      const moved = await tx.query<{ id: string }>(
        `update transfer.batches set state = $2, updated_at = now(), next_attempt_at = now() + ($3::bigint * interval '1 millisecond')
          where id = $1::uuid and state = any($4::text[]) returning id::text as id`,
        [batchId, approved.to, ms(batchLookInMs), [...approved.from]],
      );
      // It cannot have left AWAITING_APPROVAL while its approval was PENDING under this lock; never dispatch on an assumption.
      if (moved.length === 0) throw new Error(`batch ${batchId} was not awaiting approval at quorum`);
      const items = await tx.query<TransferRow>(
        `update transfer.transfers set state = $2, approved_at = now(), next_attempt_at = now(), updated_at = now()
          where batch_id = $1::uuid and state = any($3::text[]) returning *`,
        [batchId, quorum.to, [...quorum.from]],
      );
      const events = items.map((r) => approvedEvent(toTransfer(r, this.protection), emails));
      await tx.query(`insert into transfer.state_history (transfer_id, state, reason) select id, $2, $3 from unnest($1::uuid[]) as id`, [
        items.map((r) => r.id),
        quorum.to,
        `quorum ${added.count}/${a.threshold} (bulk payout)`,
      ]);
      await outbox(tx, events);
      return { kind: 'signed', quorum: true };
    });
  }

  async rejectApproval(companyId: string, batchId: string, signer: Signer, reason: string | null, graceMs: number): Promise<BatchRejectOutcome> {
    return this.db.preparedTx(async (tx): Promise<BatchRejectOutcome> => {
      const a = await this.lockApproval(tx, companyId, batchId);
      if (typeof a === 'string') return { kind: a };
      if (a.status !== 'PENDING') return { kind: 'not_pending' };
      await markRejected(tx, a.id, reason, signer);
      // The releases and the batch's close follow at once; should this process die first, the sweepers finish them.
      await makeDue(tx, a, graceMs);
      return { kind: 'rejected' };
    });
  }

  async expireApprovalIfDue(batchId: string): Promise<ApprovalRecord | undefined> {
    await this.q(
      `update transfer.approvals set status = 'EXPIRED', decided_at = now()
      where batch_id = $1::uuid and status = 'PENDING' and expires_at <= now()`,
      [batchId],
    );
    return (await this.approvals([batchId])).get(batchId);
  }

  /** Leases due batches (FOR UPDATE SKIP LOCKED, then moved `leaseMs` ahead): several sweepers never take the same one. */
  async leaseDue(limit: number, leaseMs: number, fundingLeaseMs = leaseMs): Promise<BatchRecord[]> {
    const rows = await this.q<BatchRow>(
      `with due as (select id from transfer.batches where next_attempt_at <= now() order by next_attempt_at limit $1 for update skip locked)
       update transfer.batches b
          set next_attempt_at = now() + ((case when b.state = 'FUNDING' then $3 else $2 end)::bigint * interval '1 millisecond')
         from due where b.id = due.id
       returning ${BATCH_COLS.split(', ')
         .map((c) => `b.${c.trim()}`)
         .join(', ')}`,
      [limit, String(leaseMs), String(fundingLeaseMs)],
    );
    return rows.map(toBatch);
  }

  /** Moves the batch sweeper's next look at a batch still in `state`. */
  async reschedule(id: string, state: BatchState, inMs: number | null): Promise<void> {
    await this.q(
      `update transfer.batches set next_attempt_at = case when $3::boolean then null else now() + ($2::bigint * interval '1 millisecond') end
      where id = $1::uuid and state = $4`,
      [id, String(Math.max(0, Math.round(inMs ?? 0))), inMs === null, state],
    );
  }

  /**
   * Leases up to `limit` accepted, not yet dispatched transfers of a batch whose time has come (the
   * transfer sweeper's lease: the same column, FOR UPDATE SKIP LOCKED), so an item is dispatched by
   * one worker at a time whichever process runs it.
   */
  async leaseDispatchable(batchId: string, limit: number, leaseMs: number): Promise<TransferRecord[]> {
    const rows = await this.q<TransferRow>(
      `with due as (select id from transfer.transfers where batch_id = $1::uuid and state in ('RESERVED', 'EXECUTING') and next_attempt_at <= now()
                     order by next_attempt_at limit $2 for update skip locked)
       update transfer.transfers t set next_attempt_at = now() + ($3::bigint * interval '1 millisecond') from due where t.id = due.id returning t.*`,
      [batchId, limit, String(leaseMs)],
    );
    return rows.map((r) => toTransfer(r, this.protection));
  }

  async recordDispatchIntents(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.q<{ id: string }>(
      `update transfer.transfers set dispatch_attempts = dispatch_attempts + 1, last_dispatch_at = now(), updated_at = now()
        where id = any($1::uuid[]) and state in ('RESERVED', 'EXECUTING') returning id::text as id`,
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  async markDispatched(
    batchId: string,
    move: BulkMove,
    rows: Array<{ id: string; providerTransferId: string; event: OutboxEvent }>,
    confirmTimeoutMs: number,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const res = await this.q<{ n: number }>(
      `with v as (select * from unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[]) as v(id, provider_id, event_id, subject, payload, headers)),
         u as (update transfer.transfers t set state = $7, provider_transfer_id = coalesce(nullif(v.provider_id, ''), t.provider_transfer_id),
                  dispatched_at = coalesce(t.dispatched_at, now()), next_attempt_at = now() + ($8::bigint * interval '1 millisecond'), updated_at = now()
                 from v where t.id = v.id and t.batch_id = $9::uuid and t.state = any($10::text[]) returning t.id),
         h as (insert into transfer.state_history (transfer_id, state, reason) select id, $7, 'bulk payout dispatched' from u),
         o as (insert into transfer.outbox (id, subject, payload, headers) select v.event_id, v.subject, v.payload, v.headers from v join u on u.id = v.id)
       select count(*)::integer as n from u`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.providerTransferId),
        rows.map((r) => r.event.id),
        rows.map((r) => r.event.subject),
        rows.map((r) => JSON.stringify(r.event.payload)),
        rows.map((r) => JSON.stringify(r.event.traceparent ? { traceparent: r.event.traceparent } : {})),
        move.to,
        String(Math.max(0, Math.round(confirmTimeoutMs))),
        batchId,
        [...move.from],
      ],
    );
    return res[0]?.n ?? 0;
  }

  /** How many of the batch's transfers are still live (an earlier, refused execution's are REJECTED: final). */
  async liveItems(batchId: string): Promise<number> {
    const rows = await this.q<{ n: number }>(
      `select count(*)::integer as n from transfer.transfers where batch_id = ?::uuid
          and state not in ('COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED')`,
      [batchId],
    );
    return rows[0]?.n ?? 0;
  }
}

async function outbox(tx: PreparedTx, events: OutboxEvent[]): Promise<void> {
  await tx.query(`insert into transfer.outbox (id, subject, payload, headers) select * from unnest(?::uuid[], ?::text[], ?::jsonb[], ?::jsonb[])`, [
    events.map((e) => e.id),
    events.map((e) => e.subject),
    events.map((e) => JSON.stringify(e.payload)),
    events.map((e) => JSON.stringify(e.traceparent ? { traceparent: e.traceparent } : {})),
  ]);
}
