import { createHash } from 'node:crypto';
import { MoneyExceptionsTable, TableCopy, centsFromDb, currentTraceparent, isUniqueViolation, type Database, type Logger } from '@wallet/platform';
import { checkCounterpartyLimits, type Limits } from '../domain/counterparty-limits.js';
import type { KeyType } from '../domain/keys.js';
import type { ApproverRole, PolicyDecision } from '../domain/approval-policy.js';
import type { Rail } from '../domain/rails.js';
import type { BulkMove } from '../domain/transfer-machine.js';
import type { TransferMove } from '../app/batch-ports.js';
import { COUNTED_STATES, FINAL_STATES, LIVE_STATES, type Destination, type TransferRecord, type TransferState } from '../domain/transfer.js';
import type { TransferDataProtection } from './data-protection.js';
import {
  IDEMPOTENCY_KEY_TAKEN,
  REFERENCE_TAKEN,
  type ReferenceBinding,
  type AmlEntry,
  type NewAmlEntry,
  type IdempotencyBinding,
  type KeyedTransfer,
  type OutboxEvent,
  type ReferenceClaim,
  type ReferenceRow,
  type ResolvedKey,
  type TransferStore,
  type TransitionPatch,
  type LeasedTransfer,
} from '../app/ports.js';

/** The `pg` pool under MikroORM, for single statements as named prepared statements. */
interface NativePool {
  query<R>(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

export interface TransferRow {
  id: string;
  company_id: string;
  api_key_id: string | null;
  rail: Rail;
  state: TransferState;
  amount: string;
  fixed_fee: string;
  variable_fee: string;
  subtotal_fee: string;
  iva_applicable: boolean;
  iva_amount: string;
  total_charged: string;
  target_name: string;
  target_document: string;
  reference: string | null;
  description: string | null;
  /** ACH: without `accountNumber`, which is in account_number_sealed (migration 0004). */
  destination: Destination;
  account_number_sealed: string | null;
  account_number_masked: string | null;
  hold_id: string | null;
  provider_transfer_id: string | null;
  error_message: string | null;
  dispatch_attempts: number;
  approval_id: string | null;
  approval_threshold: number | null;
  approval_expires_at: Date | string | null;
  approved_at: Date | string | null;
  policy_decision?: PolicyDecision | null;
  approval_roles?: ApproverRole[] | null;
  release_event: 'failed' | 'rejected' | null;
  rejected_by: string | null;
  created_at: Date | string;
  dispatched_at: Date | string | null;
  completed_at: Date | string | null;
  reject_code?: string | null;
  idempotency_fingerprint?: string | null;
  batch_id?: string | null;
  destination_fingerprint?: string | null;
  traceparent?: string | null;
}

const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
const dateOrNull = (v: Date | string | null): Date | null => (v == null ? null : date(v));

/**
 * A row as the domain sees it: an ACH destination gets its full account number back, opened from
 * `account_number_sealed` (dispatch and account validation need it; events and logs mask it).
 */
export function toTransfer(r: TransferRow, protection: TransferDataProtection): TransferRecord {
  const destination: Destination =
    r.destination.kind === 'ACH'
      ? { ...r.destination, accountNumber: r.account_number_sealed ? protection.openAccount(r.account_number_sealed) : '' }
      : r.destination;
  return {
    id: r.id,
    companyId: r.company_id,
    apiKeyId: r.api_key_id,
    rail: r.rail,
    state: r.state,
    amount: centsFromDb(r.amount),
    fee: {
      fixedFee: centsFromDb(r.fixed_fee),
      variableFee: centsFromDb(r.variable_fee),
      subtotalFee: centsFromDb(r.subtotal_fee),
      ivaApplicable: r.iva_applicable,
      ivaAmount: centsFromDb(r.iva_amount),
      totalCharged: centsFromDb(r.total_charged),
    },
    targetName: r.target_name,
    targetDocument: r.target_document,
    reference: r.reference,
    description: r.description,
    destination,
    holdId: r.hold_id,
    providerTransferId: r.provider_transfer_id,
    errorMessage: r.error_message,
    dispatchAttempts: r.dispatch_attempts,
    approval:
      r.approval_id && r.approval_threshold && r.approval_expires_at
        ? {
            id: r.approval_id,
            threshold: r.approval_threshold,
            expiresAt: date(r.approval_expires_at),
            ...(r.approval_roles ? { roles: r.approval_roles } : {}),
          }
        : null,
    approvedAt: dateOrNull(r.approved_at),
    releaseEvent: r.release_event ?? null,
    rejectedBy: r.rejected_by ?? null,
    createdAt: date(r.created_at),
    dispatchedAt: dateOrNull(r.dispatched_at),
    completedAt: dateOrNull(r.completed_at),
    batchId: r.batch_id ?? null,
    destinationFingerprint: r.destination_fingerprint ?? null,
    traceparent: r.traceparent ?? null,
    policyDecision: r.policy_decision ?? null,
  };
}

const ms = (n: number) => String(Math.max(0, Math.round(n)));

/**
 * The counterparty-limits lock: one per (company, bucket of the counterparty document), 64 buckets.
 * A send takes its counterparty's; a bulk payout takes those of all its counterparties (in key order,
 * so two never deadlock) — at most 64 whatever its size, where one lock per document could exhaust
 * Postgres's lock table for a batch of thousands. Two documents in one bucket merely wait for each other.
 */
export const LIMIT_LOCK_BUCKETS = 64;
/** Live AML entries kept in memory at most (a larger list is checked in the table). */
export const AML_MEMORY_MAX = 500_000;
/** SQL of the lock key from SQL text expressions of the company and the counterparty document. */
export const limitLockKeySql = (company: string, counterparty: string) =>
  `hashtextextended('transfer-limits:' || ${company} || ':' || (hashtext(${counterparty}) & ${LIMIT_LOCK_BUCKETS - 1})::text, 0)`;

/** The destination as stored: an ACH account number sealed and masked in its own columns, never in the jsonb. */
export function storedDestination(d: Destination, protection: TransferDataProtection): { destination: unknown; sealed: string | null; masked: string | null } {
  if (d.kind !== 'ACH') return { destination: d, sealed: null, masked: null };
  const { accountNumber, ...rest } = d;
  const { sealed, masked } = protection.sealAccount(accountNumber);
  return { destination: rest, sealed, masked };
}

/**
 * Which `send_references` row change goes with a state change (in the same statement): answered
 * when the transfer is accepted, or when it was given up after its reserve landed (FAILED: the
 * reference names that failed send, as any failed send); released only when it ends REJECTED (no
 * money ever held: the reference is free for a retry). While ABANDONING the outcome is still being
 * decided: the row stays, so a duplicate keeps waiting instead of making a second transfer.
 */
function referenceEffect(from: readonly TransferState[], to: TransferState): 'answer' | 'release' | 'none' {
  if (to === 'REJECTED') return 'release';
  if (to === 'RESERVED' || to === 'AWAITING_APPROVAL') return 'answer';
  if (to === 'FAILED' && from.includes('ABANDONING')) return 'answer';
  return 'none';
}

const sqlList = (states: readonly TransferState[]) => states.map((x) => `'${x}'`).join(', ');

/** The transfer service's storage on Postgres (schema `transfer`), in plain SQL. */
export class SqlTransferStore implements TransferStore {
  private pool: Promise<NativePool> | undefined;
  private readonly statementNames = new Map<string, string>();

  /** Money exceptions (CONTRACT §10): the platform's table, in this schema. */
  readonly exceptions = new MoneyExceptionsTable(<R>(sql: string, params: unknown[]) => this.run<R>(sql, params), 'transfer');

  /**
   * The live AML entries' normalized documents and destination fingerprints (one set: a fingerprint,
   * `hm1:…`, never equals a document), kept current by the change feed (`watchAml`).
   */
  private readonly aml: TableCopy<Set<string>>;

  constructor(
    private readonly db: Database,
    private readonly protection: TransferDataProtection,
  ) {
    this.aml = new TableCopy(db, 'transfer_aml', async () => {
      const rows = await this.run<{ k: string }>(
        `select coalesce(normalized_document, destination_fingerprint) as k from transfer.aml_entries
          where removed_at is null limit ${AML_MEMORY_MAX + 1}`,
      );
      // A list too large to hold is checked in the table.
      return rows.length > AML_MEMORY_MAX ? undefined : new Set(rows.map((r) => r.k));
    });
  }

  /**
   * A single statement outside a transaction, as a named prepared statement (planned once per
   * connection; MikroORM's `execute` would inline the values and re-plan every call). `?` placeholders.
   */
  private async run<R = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> {
    this.pool ??= (this.db.orm.em.getConnection() as unknown as { getNativeClient(): Promise<NativePool> }).getNativeClient();
    let i = 0;
    // Statements written with explicit $n placeholders are passed as they are.
    const text = /\$\d/.test(sql) ? sql : sql.replace(/\?/g, () => `$${++i}`);
    let name = this.statementNames.get(text);
    if (!name) {
      name = `transfer_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      if (this.statementNames.size < 1_000) this.statementNames.set(text, name);
    }
    const res = await (await this.pool).query<R>({ name, text, values: params });
    return res.rows;
  }

  // ───────────────────────────── references ─────────────────────────────

  async claimReference(companyId: string, reference: string, requestHash: string, transferId: string, windowSeconds: number): Promise<ReferenceClaim> {
    // Insert, or take over a claim older than the window; either way the row is ours only if it
    // now names our transfer. Concurrent claimers serialise on the primary key.
    const rows = await this.run<{ transfer_id: string }>(
      `insert into transfer.send_references (company_id, reference, request_hash, transfer_id, created_at, answered_at)
       values (?, ?, ?, ?::uuid, now(), null)
       on conflict (company_id, reference) do update
          set request_hash = excluded.request_hash, transfer_id = excluded.transfer_id, created_at = now(), answered_at = null
        where transfer.send_references.created_at <= now() - (?::bigint * interval '1 second')
       returning transfer_id::text as transfer_id`,
      [companyId, reference, this.protection.fingerprint(requestHash), transferId, String(windowSeconds)],
    );
    if (rows[0]?.transfer_id === transferId) return { owner: true };
    const existing = await this.getReference(companyId, reference, requestHash);
    if (!existing) return this.claimReference(companyId, reference, requestHash, transferId, windowSeconds); // released meanwhile
    return { owner: false, existing };
  }

  async getReference(companyId: string, reference: string, requestHash: string): Promise<ReferenceRow | undefined> {
    const rows = await this.run<{ request_hash: string; transfer_id: string; created_at: Date; answered_at: Date | null }>(
      `select request_hash, transfer_id::text as transfer_id, created_at, answered_at
         from transfer.send_references where company_id = ? and reference = ?`,
      [companyId, reference],
    );
    const r = rows[0];
    return (
      r && {
        sameRequest: r.request_hash === this.protection.fingerprint(requestHash),
        transferId: r.transfer_id,
        createdAt: date(r.created_at),
        answeredAt: dateOrNull(r.answered_at),
      }
    );
  }

  async answerReference(companyId: string, reference: string, transferId: string): Promise<void> {
    await this.run(
      `update transfer.send_references set answered_at = now()
        where company_id = ? and reference = ? and transfer_id = ?::uuid and answered_at is null`,
      [companyId, reference, transferId],
    );
  }

  async releaseReference(companyId: string, reference: string, transferId: string): Promise<void> {
    await this.run(`delete from transfer.send_references where company_id = ? and reference = ? and transfer_id = ?::uuid and answered_at is null`, [
      companyId,
      reference,
      transferId,
    ]);
  }

  // ───────────────────────────── AML ─────────────────────────────

  /**
   * Whether any of the candidates (normalised documents, destination fingerprints) is on the live AML
   * list. While the change feed is up (`watchAml`) from an in-memory copy of the live entries;
   * otherwise, and while a change is being reloaded, from the table (both columns: two index probes,
   * one statement).
   */
  async amlHit(candidates: string[]): Promise<boolean> {
    if (candidates.length === 0) return false;
    const live = this.aml.current;
    if (live) return candidates.some((d) => live.has(d));
    const rows = await this.run<{ hit: boolean }>(
      `select exists (select 1 from transfer.aml_entries where removed_at is null
                         and (normalized_document = any($1::text[]) or destination_fingerprint = any($1::text[]))) as hit`,
      [candidates],
    );
    return rows[0]?.hit === true;
  }

  /**
   * Starts the AML list's change feed (LISTEN transfer_aml; a trigger notifies every change at
   * commit): `TableCopy` drops the copy on each notification and reloads it. A list larger than
   * `AML_MEMORY_MAX` is not copied (every check reads the table).
   */
  async watchAml(log: Pick<Logger, 'warn'>): Promise<void> {
    await this.aml.start(log, 'AML list');
  }

  stopWatchingAml(): void {
    this.aml.stop();
  }

  async addAmlEntry(e: NewAmlEntry): Promise<AmlEntry> {
    const doc = e.kind === 'DOCUMENT';
    try {
      const rows = await this.run<AmlRow>(
        `insert into transfer.aml_entries (id, kind, document_number, normalized_document, destination_fingerprint, bank_code, account_number_masked, name, reason)
         values (?::uuid, ?, ?, ?, ?, ?, ?, ?, ?) returning ${AML_COLS}`,
        [
          e.id,
          e.kind,
          doc ? e.documentNumber : null,
          doc ? e.normalized : null,
          doc ? null : e.fingerprint,
          doc ? null : e.bankCode,
          doc ? null : e.masked,
          e.name,
          e.reason,
        ],
      );
      this.aml.wrote();
      return toAml(rows[0]!);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // Already listed: adding it again is idempotent and answers the live entry.
      const rows = await this.run<AmlRow>(
        `select ${AML_COLS} from transfer.aml_entries where ${doc ? 'normalized_document' : 'destination_fingerprint'} = ? and removed_at is null`,
        [doc ? e.normalized : e.fingerprint],
      );
      if (!rows[0]) throw err;
      return toAml(rows[0]);
    }
  }

  async removeAmlEntry(id: string): Promise<AmlEntry | undefined> {
    const rows = await this.run<AmlRow>(
      `with u as (update transfer.aml_entries set removed_at = now() where id = ?::uuid and removed_at is null returning ${AML_COLS})
       select * from u union all
       select ${AML_COLS} from transfer.aml_entries where id = ?::uuid and not exists (select 1 from u)`,
      [id, id],
    );
    this.aml.wrote();
    return rows[0] && toAml(rows[0]);
  }

  // ───────────────────────────── resolved keys ─────────────────────────────

  async rememberResolvedKey(companyId: string, r: ResolvedKey): Promise<void> {
    await this.run(
      `insert into transfer.resolved_keys (company_id, anchor_handle, key_type, key_value, recipient, resolved_at)
       values (?, ?, ?, ?, ?::jsonb, now())
       on conflict (company_id, anchor_handle) do update
          set key_type = excluded.key_type, key_value = excluded.key_value, recipient = excluded.recipient, resolved_at = now()`,
      [companyId, r.anchorHandle, r.keyType, r.keyValue, JSON.stringify(r.recipient)],
    );
  }

  async findResolvedKey(companyId: string, anchorHandle: string, maxAgeSeconds: number): Promise<ResolvedKey | undefined> {
    const rows = await this.run<{ anchor_handle: string; key_type: KeyType; key_value: string; recipient: ResolvedKey['recipient'] }>(
      `select anchor_handle, key_type, key_value, recipient from transfer.resolved_keys
        where company_id = ? and anchor_handle = ? and resolved_at > now() - (?::bigint * interval '1 second')`,
      [companyId, anchorHandle, String(maxAgeSeconds)],
    );
    const r = rows[0];
    return r && { anchorHandle: r.anchor_handle, keyType: r.key_type, keyValue: r.key_value, recipient: r.recipient };
  }

  async purgeResolvedKeys(olderThanSeconds: number): Promise<number> {
    const rows = await this.run<{ n: string }>(
      `with d as (delete from transfer.resolved_keys where resolved_at < now() - (?::bigint * interval '1 second') returning 1)
       select count(*)::text as n from d`,
      [String(olderThanSeconds)],
    );
    return Number(rows[0]?.n ?? 0);
  }

  // ───────────────────────────── transfers ─────────────────────────────

  async insertWithinLimits(
    t: TransferRecord,
    counterparty: string,
    windows: { dayStart: Date; monthStart: Date },
    limits: Limits,
    nextAttemptInMs: number,
    idempotency?: IdempotencyBinding,
    reference?: ReferenceBinding,
  ): Promise<string> {
    // ONE autocommit statement (migrations 0009, 0013): `locked_destination_usage` takes the (company,
    // counterparty document) and (company, destination fingerprint) locks, in ascending order, then
    // sums the usage of each with a snapshot taken after the locks and answers the larger; the
    // transfer and its history row are inserted only when that leaves room (the rule of
    // `checkCounterpartyLimits`, which gives the verdict from the same sums). The locks are held to
    // the statement's commit, so concurrent sends to one document, or to one account under any
    // documents, are counted one after the other.
    // With `reference`, the same statement claims (company, reference) as `claimReference` does
    // (insert, or take over a claim older than the window), only when the limits leave room, and the
    // transfer is inserted only when the claim is its own: otherwise REFERENCE_TAKEN, nothing written.
    if (reference && !t.reference) throw new Error("a reference claim needs the transfer's reference");
    const stored = storedDestination(t.destination, this.protection);
    let rows: Array<{ day_sum: string; month_sum: string; inserted: boolean; claimed: boolean }>;
    try {
      rows = await this.db.prepared<{ day_sum: string; month_sum: string; inserted: boolean; claimed: boolean }>(
        `with u as materialized (
           select day_sum, month_sum from transfer.locked_destination_usage(
             ${limitLockKeySql('$2', '$14')}, ${limitLockKeySql('$2', '$35::text')}, $2, $14, $35::text,
             $20::timestamptz, $21::timestamptz, $29::text[])),
         c as (
           insert into transfer.send_references (company_id, reference, request_hash, transfer_id, created_at, answered_at)
           select $2, $15, $32, $1::uuid, now(), null
             from u where $33::boolean and u.day_sum + $5::bigint <= $30::numeric and u.month_sum + $5::bigint <= $31::numeric
           on conflict (company_id, reference) do update
              set request_hash = excluded.request_hash, transfer_id = excluded.transfer_id, created_at = now(), answered_at = null
            where transfer.send_references.created_at <= now() - ($34::bigint * interval '1 second')
           returning transfer_id),
         t as (
           insert into transfer.transfers (
             id, company_id, api_key_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable, iva_amount,
             total_charged, target_name, target_document, counterparty_document, reference, description, destination,
             next_attempt_at, created_at, approval_id, approval_threshold, approval_expires_at, account_number_sealed, account_number_masked,
             idempotency_key, idempotency_fingerprint, destination_fingerprint, traceparent, policy_decision, approval_roles)
           select $1::uuid, $2, $3, $4, 'RECEIVED', $5::bigint, $6::bigint, $7::bigint, $8::bigint, $9, $10::bigint, $11::bigint, $12, $13, $14, $15, $16, $17::jsonb,
             clock_timestamp() + ($18::bigint * interval '1 millisecond'), $19::timestamptz, $22, $23::integer, $24::timestamptz, $25, $26, $27, $28, $35::text, $36::text, $37::jsonb, $38::text[]
             from u where u.day_sum + $5::bigint <= $30::numeric and u.month_sum + $5::bigint <= $31::numeric
              and (not $33::boolean or exists (select 1 from c where c.transfer_id = $1::uuid))
           returning id),
         h as (insert into transfer.state_history (transfer_id, state) select id, 'RECEIVED' from t)
         select u.day_sum::text as day_sum, u.month_sum::text as month_sum, exists (select 1 from t) as inserted,
                exists (select 1 from c where c.transfer_id = $1::uuid) as claimed from u`,
        [
          t.id,
          t.companyId,
          t.apiKeyId,
          t.rail,
          t.amount.toString(),
          t.fee.fixedFee.toString(),
          t.fee.variableFee.toString(),
          t.fee.subtotalFee.toString(),
          t.fee.ivaApplicable,
          t.fee.ivaAmount.toString(),
          t.fee.totalCharged.toString(),
          t.targetName,
          t.targetDocument,
          counterparty,
          t.reference,
          t.description,
          JSON.stringify(stored.destination),
          ms(nextAttemptInMs),
          t.createdAt.toISOString(),
          windows.dayStart.toISOString(),
          windows.monthStart.toISOString(),
          t.approval?.id ?? null,
          t.approval?.threshold ?? null,
          t.approval ? t.approval.expiresAt.toISOString() : null,
          stored.sealed,
          stored.masked,
          idempotency?.key ?? null,
          idempotency ? this.protection.fingerprint(idempotency.requestHash) : null,
          [...COUNTED_STATES],
          limits.daily.toString(),
          limits.monthly.toString(),
          reference ? this.protection.fingerprint(reference.requestHash) : null,
          reference !== undefined,
          String(reference?.windowSeconds ?? 0),
          t.destinationFingerprint ?? null,
          // The trace that recorded it (the Send call): later steps in other traces link to it.
          currentTraceparent() ?? null,
          t.policyDecision ? JSON.stringify(t.policyDecision) : null,
          t.approval?.roles ?? null,
        ],
      );
    } catch (err) {
      // Another transfer holds the key (it committed first: a retry or a concurrent duplicate).
      if (isUniqueViolation(err, 'transfers_idempotency_key_uq')) return IDEMPOTENCY_KEY_TAKEN;
      throw err;
    }
    const u = rows[0];
    if (!u) throw new Error('the limits statement returned no row');
    const verdict = checkCounterpartyLimits(t.amount, { daySum: BigInt(u.day_sum), monthSum: BigInt(u.month_sum) }, limits);
    if (verdict === 'OK' && reference && !u.claimed) return REFERENCE_TAKEN;
    // The statement and the rule decided on the same sums: they cannot disagree.
    if ((verdict === 'OK') !== u.inserted) throw new Error(`the limits statement and the rule disagree (${verdict}, inserted ${u.inserted})`);
    return verdict;
  }

  async findByIdempotencyKey(companyId: string, key: string, requestHash: string): Promise<KeyedTransfer | undefined> {
    const rows = await this.run<TransferRow>('select * from transfer.transfers where company_id = ? and idempotency_key = ?', [companyId, key]);
    const r = rows[0];
    return (
      r && {
        transfer: toTransfer(r, this.protection),
        sameRequest: r.idempotency_fingerprint === this.protection.fingerprint(requestHash),
        rejectCode: r.reject_code ?? null,
      }
    );
  }

  async transition(
    current: TransferRecord,
    from: readonly TransferState[],
    to: TransferState,
    patch: TransitionPatch,
    event: ((t: TransferRecord) => OutboxEvent) | null,
    callbackEventId?: string,
  ): Promise<TransferRecord | undefined> {
    const st = transitionStatement(current, from, to, patch, event, callbackEventId);
    const rows = await this.run<TransferRow>(st.sql, st.params);
    return rows[0] && toTransfer(rows[0], this.protection);
  }

  async transitionOnCallback(
    id: string,
    rail: Rail,
    from: readonly TransferState[],
    to: TransferState,
    patch: TransitionPatch,
    callbackEventId: string,
  ): Promise<TransferRecord | undefined> {
    const st = transitionStatement({ id }, from, to, patch, null, callbackEventId, { rail, unseenCallback: callbackEventId });
    const rows = await this.run<TransferRow>(st.sql, st.params);
    return rows[0] && toTransfer(rows[0], this.protection);
  }

  async transitionOnCallbacks(
    move: BulkMove,
    outcomes: ReadonlyArray<{ id: string; rail: Rail; callbackEventId: string; providerTransferId: string | null }>,
    nextAttemptInMs: number,
  ): Promise<TransferRecord[]> {
    if (outcomes.length === 0) return [];
    if (FINAL_STATES.includes(move.to) || referenceEffect(move.from, move.to) !== 'none') throw new Error(`${move.event} is not a callback's bulk move`);
    const rows = await this.run<TransferRow>(
      `with v as (select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) as v(id, rail, event_id, provider_id)),
         t as (update transfer.transfers t set state = $5, provider_transfer_id = coalesce(v.provider_id, t.provider_transfer_id),
                  next_attempt_at = now() + ($6::bigint * interval '1 millisecond'), updated_at = now()
                 from v where t.id = v.id and t.rail = v.rail and t.state = any($7::text[])
                  and not exists (select 1 from transfer.rail_callbacks c where c.event_id = v.event_id)
               returning t.*),
         h as (insert into transfer.state_history (transfer_id, state, reason) select id, state, $8 from t),
         c as (insert into transfer.rail_callbacks (event_id, transfer_id, rail, status)
               select v.event_id, t.id, t.rail, t.state from t join v on v.id = t.id on conflict (event_id) do nothing)
       select * from t`,
      [
        outcomes.map((o) => o.id),
        outcomes.map((o) => o.rail),
        outcomes.map((o) => o.callbackEventId),
        outcomes.map((o) => o.providerTransferId || null),
        move.to,
        ms(nextAttemptInMs),
        [...move.from],
        'rail outcomes (bulk callback)',
      ],
    );
    return rows.map((r) => toTransfer(r, this.protection));
  }

  async finishMany(move: BulkMove, rows: TransferMove[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    if (!FINAL_STATES.includes(move.to) || referenceEffect(move.from, move.to) !== 'none') throw new Error(`${move.event} is not a bulk finish`);
    const st = transitionTransfersStatement(null, move, rows, null, null);
    return new Set((await this.run<{ id: string }>(st.sql, st.params)).map((r) => r.id));
  }

  async recordDispatchIntent(id: string): Promise<boolean> {
    const rows = await this.run(
      `update transfer.transfers set dispatch_attempts = dispatch_attempts + 1, last_dispatch_at = now(), updated_at = now()
        where id = ?::uuid and state in ('RESERVED', 'EXECUTING') returning 1`,
      [id],
    );
    return rows.length > 0;
  }

  async recordDispatchAttempt(id: string, nextAttemptInMs: number, ambiguous: boolean, error: string): Promise<void> {
    await this.run(
      `update transfer.transfers set dispatch_misses = dispatch_misses + case when $1 then 0 else 1 end, dispatch_ambiguous = dispatch_ambiguous or $1,
              last_dispatch_error = $2, next_attempt_at = now() + ($3::bigint * interval '1 millisecond'), updated_at = now()
        where id = $4::uuid and state in ('RESERVED', 'EXECUTING')`,
      [ambiguous, error.slice(0, 500), ms(nextAttemptInMs), id],
    );
  }

  async dispatchInDoubt(id: string): Promise<boolean> {
    const rows = await this.run<{ a: boolean }>(
      'select (dispatch_ambiguous or dispatch_attempts > dispatch_misses) as a from transfer.transfers where id = ?::uuid',
      [id],
    );
    return rows[0]?.a === true;
  }

  async reschedule(id: string, state: TransferState, inMs: number | null): Promise<void> {
    await this.run(
      `update transfer.transfers set next_attempt_at = case when ?::bigint is null then null else now() + (?::bigint * interval '1 millisecond') end, updated_at = now()
        where id = ?::uuid and state = ?`,
      [inMs === null ? null : ms(inMs), inMs === null ? null : ms(inMs), id, state],
    );
  }

  // ───────────────────────────── money exceptions ─────────────────────────────

  async get(id: string): Promise<TransferRecord | undefined> {
    const rows = await this.run<TransferRow>('select * from transfer.transfers where id = ?::uuid', [id]);
    return rows[0] && toTransfer(rows[0], this.protection);
  }

  async leaseDue(limit: number, leaseMs: number, dispatchTimeoutSeconds: number): Promise<LeasedTransfer[]> {
    const rows = await this.run<TransferRow & { dispatch_expired: boolean }>(
      `with due as (
         select id from transfer.transfers
          where state in (${sqlList(LIVE_STATES)}) and next_attempt_at <= now()
          order by next_attempt_at
          limit ?
          for update skip locked)
       update transfer.transfers t set next_attempt_at = now() + (?::bigint * interval '1 millisecond')
         from due where t.id = due.id
       returning t.*, (coalesce(t.approved_at, t.accepted_at, t.created_at) + (?::bigint * interval '1 second') <= now()) as dispatch_expired`,
      [String(limit), ms(leaseMs), String(dispatchTimeoutSeconds)],
    );
    return rows.map((r) => ({ transfer: toTransfer(r, this.protection), dispatchExpired: r.dispatch_expired }));
  }

  async getForCallback(eventId: string, transferId: string): Promise<{ seen: boolean; transfer: TransferRecord | undefined }> {
    const rows = await this.run<TransferRow & { seen_: boolean }>(
      `select exists (select 1 from transfer.rail_callbacks where event_id = $1) as seen_, t.*
         from (select 1) one left join transfer.transfers t on t.id = $2::uuid`,
      [eventId, transferId],
    );
    const r = rows[0];
    return { seen: r?.seen_ === true, transfer: r && r.id ? toTransfer(r, this.protection) : undefined };
  }

  async callbackSeen(eventId: string): Promise<boolean> {
    const rows = await this.run<{ seen: boolean }>('select exists (select 1 from transfer.rail_callbacks where event_id = ?) as seen', [eventId]);
    return rows[0]?.seen === true;
  }

  async recordCallback(eventId: string, transferId: string, rail: Rail, status: string): Promise<void> {
    await this.run(`insert into transfer.rail_callbacks (event_id, transfer_id, rail, status) values (?, ?::uuid, ?, ?) on conflict (event_id) do nothing`, [
      eventId,
      transferId,
      rail,
      status,
    ]);
  }
}

/**
 * The compare-and-set of a transfer's state as ONE statement (history row, outbox event, reference
 * answer/release, handled callback and, for a multi-signature acceptance, the approval row), so it
 * runs alone or inside a transaction alike.
 */
export function transitionStatement(
  current: TransferRecord | { id: string },
  from: readonly TransferState[],
  to: TransferState,
  patch: TransitionPatch,
  event: ((t: TransferRecord) => OutboxEvent) | null,
  callbackEventId?: string,
  /** A callback's transition made without reading the transfer: it must be of this rail and the callback unseen. */
  guard?: { rail: Rail; unseenCallback: string },
): { sql: string; params: unknown[] } {
  if (event && !('companyId' in current)) throw new Error('an event is built from the transfer as read');
  const next = {
    ...current,
    state: to,
    ...(patch.holdId !== undefined ? { holdId: patch.holdId } : {}),
    ...(patch.providerTransferId !== undefined ? { providerTransferId: patch.providerTransferId } : {}),
    ...(patch.errorMessage !== undefined ? { errorMessage: patch.errorMessage } : {}),
    ...(patch.dispatchedAt !== undefined ? { dispatchedAt: patch.dispatchedAt } : {}),
    ...(patch.completedAt !== undefined ? { completedAt: patch.completedAt } : {}),
    ...(patch.approval !== undefined ? { approval: patch.approval } : {}),
    ...(patch.approvedAt !== undefined ? { approvedAt: patch.approvedAt } : {}),
    ...(patch.releaseEvent !== undefined ? { releaseEvent: patch.releaseEvent } : {}),
    ...(patch.rejectedBy !== undefined ? { rejectedBy: patch.rejectedBy } : {}),
    ...(patch.fee !== undefined ? { fee: patch.fee } : {}),
  };
  const evt = event ? event(next as TransferRecord) : null;
  const refEffect = referenceEffect(from, to);
  const final = FINAL_STATES.includes(to);
  const params: unknown[] = [
    to,
    patch.holdId ?? null,
    patch.providerTransferId ?? null,
    patch.errorMessage ?? null,
    patch.rejectCode ?? null,
    patch.dispatchedAt ? patch.dispatchedAt.toISOString() : null,
    patch.completedAt ? patch.completedAt.toISOString() : null,
    final || patch.nextAttemptInMs === null,
    typeof patch.nextAttemptInMs === 'number' ? ms(patch.nextAttemptInMs) : '0',
    typeof patch.nextAttemptInMs === 'number',
    final,
    current.id,
    [...from],
    patch.reason ?? null,
    evt?.id ?? null,
    evt?.subject ?? null,
    evt ? JSON.stringify(evt.payload) : null,
    JSON.stringify(evt?.traceparent ? { traceparent: evt.traceparent } : {}),
    refEffect,
    callbackEventId ?? null,
    patch.approval?.id ?? null,
    patch.approval?.threshold ?? null,
    patch.approval ? patch.approval.expiresAt.toISOString() : null,
    patch.approvedAt ? patch.approvedAt.toISOString() : null,
    patch.releaseEvent ?? null,
    patch.rejectedBy ?? null,
    patch.dispatchIntent === true,
    patch.fee !== undefined,
    patch.fee?.fixedFee.toString() ?? null,
    patch.fee?.variableFee.toString() ?? null,
    patch.fee?.subtotalFee.toString() ?? null,
    patch.fee?.ivaAmount.toString() ?? null,
    patch.fee?.totalCharged.toString() ?? null,
    patch.approval?.roles ?? null,
    ...(guard ? [guard.rail, guard.unseenCallback] : []),
  ];
  const guarded = guard ? ` and rail = $35 and not exists (select 1 from transfer.rail_callbacks where event_id = $36)` : '';
  const sql = `with t as (
       update transfer.transfers set
         state = $1,
         hold_id = coalesce($2::uuid, hold_id),
         provider_transfer_id = coalesce($3, provider_transfer_id),
         error_message = coalesce($4, error_message),
         reject_code = coalesce($5, reject_code),
         dispatched_at = coalesce($6::timestamptz, dispatched_at),
         completed_at = coalesce($7::timestamptz, completed_at),
         approval_id = coalesce($21, approval_id),
         approval_threshold = coalesce($22::integer, approval_threshold),
         approval_expires_at = coalesce($23::timestamptz, approval_expires_at),
         approved_at = coalesce($24::timestamptz, approved_at),
         release_event = coalesce($25, release_event),
         rejected_by = coalesce($26, rejected_by),
         dispatch_attempts = dispatch_attempts + case when $27::boolean then 1 else 0 end,
         last_dispatch_at = case when $27::boolean then now() else last_dispatch_at end,
         fixed_fee = case when $28::boolean then $29::bigint else fixed_fee end,
         variable_fee = case when $28::boolean then $30::bigint else variable_fee end,
         subtotal_fee = case when $28::boolean then $31::bigint else subtotal_fee end,
         iva_amount = case when $28::boolean then $32::bigint else iva_amount end,
         total_charged = case when $28::boolean then $33::bigint else total_charged end,
         next_attempt_at = case when $8::boolean then null
                                when $10::boolean then now() + ($9::bigint * interval '1 millisecond')
                                else next_attempt_at end,
         finished_at = case when $11::boolean then now() else finished_at end,
         updated_at = now()
       where id = $12::uuid and state = any($13::text[])${guarded}
       returning *),
     h as (insert into transfer.state_history (transfer_id, state, reason) select id, state, $14 from t),
     o as (insert into transfer.outbox (id, subject, payload, headers)
           select $15::uuid, $16, $17::jsonb, $18::jsonb from t where $15::uuid is not null),
     r as (update transfer.send_references s set answered_at = now() from t
            where $19 = 'answer' and s.company_id = t.company_id and s.reference = t.reference
              and s.transfer_id = t.id and s.answered_at is null
           returning 1),
     d as (delete from transfer.send_references s using t
            where $19 = 'release' and s.company_id = t.company_id and s.reference = t.reference
              and s.transfer_id = t.id and s.answered_at is null
           returning 1),
     c as (insert into transfer.rail_callbacks (event_id, transfer_id, rail, status)
           select $20, t.id, t.rail, t.state from t where $20::text is not null
           on conflict (event_id) do nothing),
     a as (insert into transfer.approvals (id, transfer_id, company_id, threshold, status, expires_at, roles)
           select $21, t.id, t.company_id, $22::integer, 'PENDING', $23::timestamptz, $34::text[] from t where $21::text is not null)
     select * from t`;
  return { sql, params };
}

const AML_COLS = 'id::text as id, kind, document_number, bank_code, account_number_masked, name, reason, created_at, removed_at';
interface AmlRow {
  id: string;
  kind: 'DOCUMENT' | 'BANK_ACCOUNT';
  document_number: string | null;
  bank_code: string | null;
  account_number_masked: string | null;
  name: string | null;
  reason: string;
  created_at: Date;
  removed_at: Date | null;
}
function toAml(r: AmlRow): AmlEntry {
  return {
    id: r.id,
    kind: r.kind,
    documentNumber: r.document_number,
    bankAccount: r.kind === 'BANK_ACCOUNT' ? { bankCode: r.bank_code ?? '', accountNumberMasked: r.account_number_masked ?? '' } : null,
    name: r.name,
    reason: r.reason,
    createdAt: date(r.created_at),
    removedAt: dateOrNull(r.removed_at),
  };
}

/**
 * Many transfers through ONE event of the send saga's table (the caller checked it: `TransferSaga.applyBulk`),
 * in one statement: compare-and-set per row (state in `move.from`; of batch `batchId` when given), the
 * row's hold, refusal code and completion instant when it carries them, history, and the outbox event
 * of each row that moved. `nextAttemptInMs`: when the transfer sweeper may look at them (null: never; a
 * batch owns them, or the state is final). Answers the ids that moved.
 */
export function transitionTransfersStatement(
  batchId: string | null,
  move: BulkMove,
  rows: TransferMove[],
  nextAttemptInMs: number | null,
  reason: string | null,
): { sql: string; params: unknown[] } {
  return {
    sql: `with v as (select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::jsonb[], $7::jsonb[], $14::timestamptz[])
              as v(id, hold_id, reject_code, event_id, subject, payload, headers, completed_at)),
         u as (update transfer.transfers t set state = $8, hold_id = coalesce(v.hold_id, t.hold_id), reject_code = coalesce(v.reject_code, t.reject_code),
                  completed_at = coalesce(v.completed_at, t.completed_at),
                  next_attempt_at = case when $9::bigint is null then null else now() + ($9::bigint * interval '1 millisecond') end,
                  finished_at = case when $15::boolean then now() else finished_at end, updated_at = now(),
                  accepted_at = case when $13::boolean then now() else t.accepted_at end
                 from v where t.id = v.id and ($10::uuid is null or t.batch_id = $10::uuid) and t.state = any($11::text[]) returning t.id),
         h as (insert into transfer.state_history (transfer_id, state, reason) select id, $8, $12 from u),
         o as (insert into transfer.outbox (id, subject, payload, headers)
               select v.event_id, v.subject, v.payload, v.headers from v join u on u.id = v.id where v.event_id is not null)
       select id::text as id from u`,
    params: [
      rows.map((r) => r.id),
      rows.map((r) => r.holdId),
      rows.map((r) => r.rejectCode),
      rows.map((r) => r.event?.id ?? null),
      rows.map((r) => r.event?.subject ?? null),
      rows.map((r) => (r.event ? JSON.stringify(r.event.payload) : null)),
      rows.map((r) => JSON.stringify(r.event?.traceparent ? { traceparent: r.event.traceparent } : {})),
      move.to,
      nextAttemptInMs === null ? null : String(Math.max(0, Math.round(nextAttemptInMs))),
      batchId,
      [...move.from],
      reason,
      move.startsDispatchClock,
      rows.map((r) => r.completedAt?.toISOString() ?? null),
      FINAL_STATES.includes(move.to),
    ],
  };
}
