import type { Database } from '@wallet/platform';
import type {
  CounterpartyDecision,
  CounterpartyInsert,
  CounterpartyListQuery,
  CounterpartyMove,
  CounterpartyStore,
  OutboxEvent,
  VerificationAttempt,
} from '../app/ports.js';
import type { CounterpartyDestination, CounterpartyRecord, VerificationStatus } from '../domain/counterparty.js';
import type { ScreenedDestination } from '../domain/destination-fingerprint.js';
import type { Rail } from '../domain/rails.js';
import type { TransferDataProtection } from './data-protection.js';

interface CounterpartyRow {
  id: string;
  company_id: string;
  name: string;
  rail: Rail;
  destination: Record<string, unknown>;
  account_number_sealed: string | null;
  document_type_id: number;
  document_number: string;
  holder_name: string;
  tags: string[];
  status: VerificationStatus;
  verification_id: string;
  prenote_id: string | null;
  prenote_submitted_at: Date | string | null;
  verification_requested_at: Date | string | null;
  verification_decided_at: Date | string | null;
  reason_code: string | null;
  reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  deleted_at: Date | string | null;
  version: number;
}

const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
const dateOrNull = (v: Date | string | null): Date | null => (v == null ? null : date(v));

const COLS = `id, company_id, name, rail, destination, account_number_sealed, document_type_id, document_number, holder_name, tags, status,
  verification_id, prenote_id, prenote_submitted_at, verification_requested_at, verification_decided_at, reason_code, reason,
  created_at, updated_at, deleted_at, version`;

/** The counterparties of the transfer service on Postgres (schema `transfer`, migration 0015), in plain SQL. */
export class SqlCounterpartyStore implements CounterpartyStore {
  constructor(
    private readonly db: Database,
    private readonly protection: TransferDataProtection,
  ) {}

  private toRecord(r: CounterpartyRow): CounterpartyRecord {
    const destination = (
      r.rail === 'ACH'
        ? { ...r.destination, accountNumber: r.account_number_sealed ? this.protection.openAccount(r.account_number_sealed) : '' }
        : r.destination
    ) as CounterpartyDestination;
    return {
      id: r.id,
      companyId: r.company_id,
      name: r.name,
      rail: r.rail,
      destination,
      documentTypeId: r.document_type_id,
      documentNumber: r.document_number,
      holderName: r.holder_name,
      tags: r.tags,
      status: r.status,
      verificationId: r.verification_id,
      prenoteId: r.prenote_id,
      prenoteSubmittedAt: dateOrNull(r.prenote_submitted_at),
      reasonCode: r.reason_code,
      reason: r.reason,
      requestedAt: dateOrNull(r.verification_requested_at),
      decidedAt: dateOrNull(r.verification_decided_at),
      createdAt: date(r.created_at),
      updatedAt: date(r.updated_at),
      deletedAt: dateOrNull(r.deleted_at),
      version: r.version,
    };
  }

  /** The destination as stored: an ACH account number sealed and masked in its own columns, never in the jsonb. */
  private stored(d: CounterpartyDestination): { destination: string; sealed: string | null; masked: string | null; fingerprint: string } {
    const screened: ScreenedDestination = d.kind === 'ACH' ? { kind: 'ACH', bankAchCode: d.bankAchCode, accountNumber: d.accountNumber } : d;
    const fingerprint = this.protection.destinationFingerprint(screened);
    if (d.kind !== 'ACH') return { destination: JSON.stringify(d), sealed: null, masked: null, fingerprint };
    const { accountNumber, ...rest } = d;
    const { sealed, masked } = this.protection.sealAccount(accountNumber);
    return { destination: JSON.stringify(rest), sealed, masked, fingerprint };
  }

  async insert(
    c: CounterpartyRecord,
    move: CounterpartyMove,
    attempt: VerificationAttempt,
    idempotency: { key: string; requestHash: string } | null,
  ): Promise<CounterpartyInsert> {
    const s = this.stored(c.destination);
    const hash = idempotency ? this.protection.fingerprint(idempotency.requestHash) : null;
    const rows = await this.db.prepared<CounterpartyRow>(
      `with c as (
         insert into transfer.counterparties (id, company_id, name, rail, destination, account_number_sealed, account_number_masked,
           destination_fingerprint, document_type_id, document_number, holder_name, tags, status, verification_id, prenote_id,
           verification_requested_at, next_check_at, idempotency_key, request_fingerprint)
         values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12::text[], $13, $14, $15,
           now(), clock_timestamp() + ($16::bigint * interval '1 millisecond'), $17, $18)
         on conflict (company_id, idempotency_key) where idempotency_key is not null do nothing
         returning ${COLS}),
       h as (
         insert into transfer.counterparty_history (counterparty_id, event, actor, from_status, to_status, verification_id)
         select id, 'created', $19, null, $20, verification_id from c
         union all select id, $21, $19, $20, status, verification_id from c)
       select ${COLS} from c`,
      [
        c.id,
        c.companyId,
        c.name,
        c.rail,
        s.destination,
        s.sealed,
        s.masked,
        s.fingerprint,
        c.documentTypeId,
        c.documentNumber,
        c.holderName,
        c.tags,
        move.to,
        attempt.verificationId,
        attempt.prenoteId,
        String(attempt.checkInMs),
        idempotency?.key ?? null,
        hash,
        move.actor,
        move.from[0] ?? 'UNVERIFIED',
        move.event,
      ],
    );
    if (rows[0]) return { inserted: true, counterparty: this.toRecord(rows[0]) };
    const held = await this.db.prepared<CounterpartyRow & { request_fingerprint: string | null }>(
      `select ${COLS}, request_fingerprint from transfer.counterparties where company_id = $1 and idempotency_key = $2`,
      [c.companyId, idempotency!.key],
    );
    if (!held[0]) throw new Error('an idempotency key conflict without its counterparty');
    return { inserted: false, existing: this.toRecord(held[0]), sameRequest: held[0].request_fingerprint === hash };
  }

  async get(companyId: string, id: string): Promise<CounterpartyRecord | undefined> {
    const rows = await this.db.prepared<CounterpartyRow>(
      `select ${COLS} from transfer.counterparties where id = $1 and company_id = $2 and deleted_at is null`,
      [id, companyId],
    );
    return rows[0] && this.toRecord(rows[0]);
  }

  async getByPrenote(prenoteId: string): Promise<CounterpartyRecord | undefined> {
    const rows = await this.db.prepared<CounterpartyRow>(`select ${COLS} from transfer.counterparties where prenote_id = $1 and deleted_at is null`, [
      prenoteId,
    ]);
    return rows[0] && this.toRecord(rows[0]);
  }

  async list(companyId: string, q: CounterpartyListQuery): Promise<CounterpartyRecord[]> {
    const rows = await this.db.prepared<CounterpartyRow>(
      `select ${COLS} from transfer.counterparties
        where company_id = $1 and deleted_at is null
          and ($2::text is null or tags @> array[$2::text])
          and ($3::text is null or status = $3)
          and ($4::text is null or rail = $4)
          and ($5::timestamptz is null or (created_at, id) < ($5::timestamptz, $6::text))
        order by created_at desc, id desc
        limit $7`,
      [companyId, q.tag, q.status, q.rail, q.cursor?.createdAt ?? null, q.cursor?.id ?? null, q.limit],
    );
    return rows.map((r) => this.toRecord(r));
  }

  async update(
    current: CounterpartyRecord,
    patch: { name?: string; tags?: string[]; identity?: Pick<CounterpartyRecord, 'rail' | 'destination' | 'documentTypeId' | 'documentNumber' | 'holderName'> },
    move: CounterpartyMove | null,
    attempt: VerificationAttempt | null,
  ): Promise<CounterpartyRecord | undefined> {
    const id = patch.identity;
    const s = id ? this.stored(id.destination) : null;
    const rows = await this.db.prepared<CounterpartyRow>(
      `with u as (
         update transfer.counterparties set
           name = coalesce($3, name),
           tags = coalesce($4::text[], tags),
           rail = coalesce($5, rail),
           destination = coalesce($6::jsonb, destination),
           account_number_sealed = case when $6::jsonb is null then account_number_sealed else $7 end,
           account_number_masked = case when $6::jsonb is null then account_number_masked else $8 end,
           destination_fingerprint = coalesce($9, destination_fingerprint),
           document_type_id = coalesce($10::integer, document_type_id),
           document_number = coalesce($11, document_number),
           holder_name = coalesce($12, holder_name),
           status = coalesce($13, status),
           verification_id = coalesce($14, verification_id),
           prenote_id = case when $14::text is null then prenote_id else $15 end,
           prenote_submitted_at = case when $14::text is null then prenote_submitted_at else null end,
           verification_requested_at = case when $14::text is null then verification_requested_at else now() end,
           verification_decided_at = case when $14::text is null then verification_decided_at else null end,
           reason_code = case when $14::text is null then reason_code else null end,
           reason = case when $14::text is null then reason else null end,
           next_check_at = case when $14::text is null then next_check_at else clock_timestamp() + ($16::bigint * interval '1 millisecond') end,
           updated_at = now(), version = version + 1
         where id = $1 and version = $2 and deleted_at is null
         returning ${COLS}),
       h as (
         insert into transfer.counterparty_history (counterparty_id, event, actor, from_status, to_status, verification_id)
         select id, $17, $18, $19, status, verification_id from u where $17::text is not null)
       select ${COLS} from u`,
      [
        current.id,
        current.version,
        patch.name ?? null,
        patch.tags ?? null,
        id?.rail ?? null,
        s?.destination ?? null,
        s?.sealed ?? null,
        s?.masked ?? null,
        s?.fingerprint ?? null,
        id?.documentTypeId ?? null,
        id?.documentNumber ?? null,
        id?.holderName ?? null,
        move?.to ?? null,
        attempt?.verificationId ?? null,
        attempt?.prenoteId ?? null,
        String(attempt?.checkInMs ?? 0),
        move?.event ?? null,
        move?.actor ?? null,
        move ? current.status : null,
      ],
    );
    return rows[0] && this.toRecord(rows[0]);
  }

  async transition(
    current: CounterpartyRecord,
    move: CounterpartyMove,
    patch: { attempt?: VerificationAttempt; decision?: CounterpartyDecision },
    event: ((c: CounterpartyRecord) => OutboxEvent) | null,
  ): Promise<CounterpartyRecord | undefined> {
    const a = patch.attempt;
    return this.db.preparedTx(async (tx) => {
      const rows = await tx.query<CounterpartyRow>(
        `with u as (
           update transfer.counterparties set
             status = $4,
             verification_id = coalesce($5, verification_id),
             prenote_id = case when $5::text is null then prenote_id else $6 end,
             prenote_submitted_at = case when $5::text is null then prenote_submitted_at else null end,
             verification_requested_at = case when $5::text is null then verification_requested_at else now() end,
             verification_decided_at = case when $5::text is null then now() else null end,
             reason_code = $7, reason = $8,
             next_check_at = case when $5::text is null then null else clock_timestamp() + ($9::bigint * interval '1 millisecond') end,
             updated_at = now(), version = version + 1
           where id = $1 and status = any($2::text[]) and verification_id = $3 and deleted_at is null
           returning ${COLS}),
         h as (
           insert into transfer.counterparty_history (counterparty_id, event, actor, from_status, to_status, verification_id, reason_code)
           select id, $10, $11, $12, status, verification_id, reason_code from u)
         select ${COLS} from u`,
        [
          current.id,
          move.from,
          current.verificationId,
          move.to,
          a?.verificationId ?? null,
          a?.prenoteId ?? null,
          patch.decision?.reasonCode ?? null,
          patch.decision?.reason ?? null,
          String(a?.checkInMs ?? 0),
          move.event,
          move.actor,
          current.status,
        ],
      );
      const won = rows[0] && this.toRecord(rows[0]);
      if (won && event) {
        const e = event(won);
        await tx.query(`insert into transfer.outbox (id, subject, payload, headers) values ($1::uuid, $2, $3::jsonb, $4::jsonb)`, [
          e.id,
          e.subject,
          JSON.stringify(e.payload),
          JSON.stringify(e.traceparent ? { traceparent: e.traceparent } : {}),
        ]);
      }
      return won;
    });
  }

  async markPrenoteSubmitted(id: string, prenoteId: string, checkInMs: number): Promise<void> {
    await this.db.prepared(
      `update transfer.counterparties
          set prenote_submitted_at = coalesce(prenote_submitted_at, now()), next_check_at = clock_timestamp() + ($3::bigint * interval '1 millisecond')
        where id = $1 and prenote_id = $2 and status = 'PENDING'`,
      [id, prenoteId, String(checkInMs)],
    );
  }

  async reschedule(id: string, verificationId: string, inMs: number): Promise<void> {
    await this.db.prepared(
      `update transfer.counterparties set next_check_at = clock_timestamp() + ($3::bigint * interval '1 millisecond')
        where id = $1 and verification_id = $2 and status = 'PENDING'`,
      [id, verificationId, String(Math.max(0, Math.round(inMs)))],
    );
  }

  async leaseDue(limit: number, leaseMs: number): Promise<CounterpartyRecord[]> {
    const rows = await this.db.prepared<CounterpartyRow>(
      `with due as (
         select id from transfer.counterparties
          where status = 'PENDING' and deleted_at is null and next_check_at <= clock_timestamp()
          order by next_check_at limit $1 for update skip locked)
       update transfer.counterparties c set next_check_at = clock_timestamp() + ($2::bigint * interval '1 millisecond')
         from due where c.id = due.id
       returning ${COLS.split(',')
         .map((x) => `c.${x.trim()}`)
         .join(', ')}`,
      [limit, String(leaseMs)],
    );
    return rows.map((r) => this.toRecord(r));
  }

  async softDelete(companyId: string, id: string): Promise<CounterpartyRecord | undefined> {
    const rows = await this.db.prepared<CounterpartyRow>(
      `update transfer.counterparties set deleted_at = now(), updated_at = now(), version = version + 1, next_check_at = null
        where id = $1 and company_id = $2 and deleted_at is null returning ${COLS}`,
      [id, companyId],
    );
    return rows[0] && this.toRecord(rows[0]);
  }
}
