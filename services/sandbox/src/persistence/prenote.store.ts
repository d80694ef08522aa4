import { randomUUID } from 'node:crypto';
import type { Database, Tx } from '@wallet/platform';
import { prenoteCallbackKey, type PrenoteBehaviour, type PrenoteFinalStatus, type PrenoteReasonCode, type PrenoteStatus } from '../domain/prenotes.js';
import type { NewPrenote, PrenoteBehaviourRow, PrenoteBook, PrenoteCallbackFactory, PrenoteRow } from '../app/ports.js';

/** The ACH prenotes' SQL: prenotes, their outcome callbacks and the per-account behaviours (times from the database clock). */

interface RawPrenote {
  prenote_id: string;
  bank_code: string;
  account_type_id: number | string;
  account_number: string;
  document_type_id: number | string;
  document_number: string;
  holder_name: string | null;
  callback_url: string;
  status: PrenoteStatus;
  reason_code: PrenoteReasonCode | null;
  decided_status: PrenoteFinalStatus;
  decided_reason_code: PrenoteReasonCode | null;
  submitted_at: string;
  settled_at: string | null;
}

interface RawBehaviour {
  account_number: string;
  delay_ms: number | string;
  rejection_rate: number | string;
  reason_code: PrenoteReasonCode;
  updated_at: string;
}

const iso = (col: string, alias = col) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${alias}`;
const cols = (p: string) =>
  `${p}prenote_id, ${p}bank_code, ${p}account_type_id, ${p}account_number, ${p}document_type_id, ${p}document_number, ${p}holder_name,
  ${p}callback_url, ${p}status, ${p}reason_code, ${p}decided_status, ${p}decided_reason_code, ${iso(`${p}submitted_at`, 'submitted_at')},
  ${iso(`${p}settled_at`, 'settled_at')}`;
const PRENOTE_COLS = cols('');
/** PRENOTE_COLS qualified with the alias `p` (for statements that join other relations). */
const PRENOTE_COLS_P = cols('p.');
const BEHAVIOUR_COLS = `account_number, delay_ms, rejection_rate, reason_code, ${iso('updated_at')}`;

function toPrenote(r: RawPrenote): PrenoteRow {
  return {
    prenoteId: r.prenote_id,
    bankCode: r.bank_code,
    accountTypeId: Number(r.account_type_id),
    accountNumber: r.account_number,
    documentTypeId: Number(r.document_type_id),
    documentNumber: r.document_number,
    holderName: r.holder_name,
    callbackUrl: r.callback_url,
    status: r.status,
    reasonCode: r.reason_code,
    decided: { status: r.decided_status, reasonCode: r.decided_reason_code },
    submittedAt: r.submitted_at,
    settledAt: r.settled_at,
  };
}

const toBehaviour = (r: RawBehaviour): PrenoteBehaviourRow => ({
  accountNumber: r.account_number,
  delayMs: Number(r.delay_ms),
  rejectionRate: Number(r.rejection_rate),
  reasonCode: r.reason_code,
  updatedAt: r.updated_at,
});

export class PrenoteStore implements PrenoteBook {
  constructor(private readonly db: Database) {}

  /** Inserts the prenote unless its id is known; returns the stored row and whether it is new. */
  async insertPrenote(p: NewPrenote): Promise<{ prenote: PrenoteRow; created: boolean }> {
    const [inserted] = await this.db.query<RawPrenote>(
      `insert into sandbox.ach_prenotes (prenote_id, bank_code, account_type_id, account_number, document_type_id, document_number, holder_name,
         callback_url, decided_status, decided_reason_code, outcome_due_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, clock_timestamp() + ?::int * interval '1 millisecond')
       on conflict (prenote_id) do nothing
       returning ${PRENOTE_COLS}`,
      [
        p.prenoteId,
        p.bankCode,
        p.accountTypeId,
        p.accountNumber,
        p.documentTypeId,
        p.documentNumber,
        p.holderName,
        p.callbackUrl,
        p.decided.status,
        p.decided.reasonCode,
        p.delayMs,
      ],
    );
    if (inserted) return { prenote: toPrenote(inserted), created: true };
    const existing = await this.findPrenote(p.prenoteId);
    if (!existing) throw new Error(`prenote ${p.prenoteId} vanished after a conflicting insert`);
    return { prenote: existing, created: false };
  }

  async findPrenote(prenoteId: string): Promise<PrenoteRow | undefined> {
    const [r] = await this.db.query<RawPrenote>(`select ${PRENOTE_COLS} from sandbox.ach_prenotes where prenote_id = ?`, [prenoteId]);
    return r ? toPrenote(r) : undefined;
  }

  async lockPrenote(tx: Tx, prenoteId: string): Promise<PrenoteRow | undefined> {
    const r = await tx.one<RawPrenote>(`select ${PRENOTE_COLS} from sandbox.ach_prenotes where prenote_id = ? for update`, [prenoteId]);
    return r ? toPrenote(r) : undefined;
  }

  async lockDuePrenotes(tx: Tx, limit: number): Promise<PrenoteRow[]> {
    const rows = await tx.query<RawPrenote>(
      `select ${PRENOTE_COLS} from sandbox.ach_prenotes
        where status = 'PENDING' and outcome_due_at <= clock_timestamp()
        order by outcome_due_at limit ? for update skip locked`,
      [limit],
    );
    return rows.map(toPrenote);
  }

  /**
   * Records the outcomes of locked pending prenotes (one statement) and writes their callbacks
   * (another), in the caller's transaction; returns the settled prenotes.
   */
  async settlePrenotes(
    tx: Tx,
    outcomes: Array<{ prenoteId: string; status: PrenoteFinalStatus; reasonCode: PrenoteReasonCode | null }>,
    forced: boolean,
    body: PrenoteCallbackFactory,
    deliveryWindowMs: number,
  ): Promise<PrenoteRow[]> {
    if (outcomes.length === 0) return [];
    const rows = await tx.query<RawPrenote>(
      `update sandbox.ach_prenotes p set status = o.status, reason_code = nullif(o.reason_code, ''), forced = ?, settled_at = clock_timestamp()
         from unnest(array[?]::text[], array[?]::text[], array[?]::text[]) as o(prenote_id, status, reason_code)
        where p.prenote_id = o.prenote_id and p.status = 'PENDING'
       returning ${PRENOTE_COLS_P}`,
      [forced, outcomes.map((o) => o.prenoteId), outcomes.map((o) => o.status), outcomes.map((o) => o.reasonCode ?? '')],
    ); // '' for none: null does not survive the inlined array
    if (rows.length !== outcomes.length) throw new Error('some prenotes to settle were no longer pending');
    const settled = rows.map(toPrenote);
    const ids = settled.map(() => randomUUID());
    await tx.query(
      `insert into sandbox.callbacks (event_id, transaction_id, callback_url, body, expires_at)
       select e, k, u, b, clock_timestamp() + ?::bigint * interval '1 millisecond'
         from unnest(array[?]::uuid[], array[?]::text[], array[?]::text[], array[?]::text[]) as c(e, k, u, b)`,
      [deliveryWindowMs, ids, settled.map((p) => prenoteCallbackKey(p.prenoteId)), settled.map((p) => p.callbackUrl), settled.map((p, i) => body(p, ids[i]!))],
    );
    return settled;
  }

  // ---- Per-account behaviours ---------------------------------------------------------------

  async behaviour(accountNumber: string): Promise<PrenoteBehaviourRow | undefined> {
    const [r] = await this.db.query<RawBehaviour>(`select ${BEHAVIOUR_COLS} from sandbox.ach_prenote_behaviours where account_number = ?`, [accountNumber]);
    return r ? toBehaviour(r) : undefined;
  }

  async setBehaviour(accountNumber: string, b: PrenoteBehaviour): Promise<PrenoteBehaviourRow> {
    const [r] = await this.db.query<RawBehaviour>(
      `insert into sandbox.ach_prenote_behaviours (account_number, delay_ms, rejection_rate, reason_code) values (?, ?, ?, ?)
       on conflict (account_number) do update
         set delay_ms = excluded.delay_ms, rejection_rate = excluded.rejection_rate, reason_code = excluded.reason_code, updated_at = clock_timestamp()
       returning ${BEHAVIOUR_COLS}`,
      [accountNumber, b.delayMs, b.rejectionRate, b.reasonCode],
    );
    return toBehaviour(r!);
  }

  async deleteBehaviour(accountNumber: string): Promise<boolean> {
    const rows = await this.db.query<{ account_number: string }>(
      `delete from sandbox.ach_prenote_behaviours where account_number = ? returning account_number`,
      [accountNumber],
    );
    return rows.length > 0;
  }
}
