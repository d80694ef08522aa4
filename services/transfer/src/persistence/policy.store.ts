import { isUniqueViolation, type Database, type PreparedTx } from '@wallet/platform';
import type { OutboxEvent, Signer } from '../app/ports.js';
import type {
  CancelPolicyOutcome,
  DecidingVersion,
  PolicyStatus,
  PolicyStore,
  PolicyVersionRecord,
  ProposeOutcome,
  SignPolicyOutcome,
} from '../app/policy-ports.js';
import type { PolicyDocumentJson } from '../domain/approval-policy.js';
import { COUNTED_STATES } from '../domain/transfer.js';

interface PolicyRow {
  id: string;
  company_id: string;
  version: number;
  document: PolicyDocumentJson;
  status: PolicyStatus;
  required_signatures: number;
  proposed_by: string;
  proposed_by_email: string;
  note: string | null;
  created_at: Date | string;
  decided_at: Date | string | null;
  decided_by: string | null;
  effective_at: Date | string | null;
  signatures: Array<{ userId: string; email: string; role: string; signedAt: string }>;
}

const date = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
const dateOrNull = (v: Date | string | null): Date | null => (v == null ? null : date(v));

/** What the company sent on a Bogotá day ($1 company, $2 day, `states` the counted states' parameter): accepted or on their way. */
const sentToday = (states: string) => `(select coalesce(sum(amount), 0) from transfer.transfers where company_id = $1 and state = any(${states}::text[])
    and created_at >= ($2::date::timestamp at time zone 'America/Bogota') and created_at < (($2::date + 1)::timestamp at time zone 'America/Bogota'))`;
const COUNTED = `{${COUNTED_STATES.join(',')}}`;

/**
 * The versions that decide from the instant $2 on, for company $1: the one in force then (the highest
 * APPROVED version whose effective_at has passed) and every higher APPROVED one.
 */
const FROM_INSTANT = (p: string) => `${p}.company_id = $1 and ${p}.status = 'APPROVED' and ${p}.version >= coalesce((
    select max(version) from transfer.approval_policies where company_id = $1 and status = 'APPROVED' and effective_at <= $2::timestamptz), 0)`;

/** A version with its signatures in signing order (one statement). */
const VIEW = `select p.*, coalesce((select json_agg(json_build_object('userId', s.user_id, 'email', s.email, 'role', s.role, 'signedAt', s.signed_at)
    order by s.signed_at, s.user_id) from transfer.approval_policy_signatures s where s.policy_id = p.id), '[]'::json) as signatures
  from transfer.approval_policies p`;

function toRecord(r: PolicyRow): PolicyVersionRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    version: r.version,
    document: r.document,
    status: r.status,
    requiredSignatures: r.required_signatures,
    proposedBy: r.proposed_by,
    proposedByEmail: r.proposed_by_email,
    note: r.note,
    createdAt: date(r.created_at),
    decidedAt: dateOrNull(r.decided_at),
    decidedBy: r.decided_by,
    effectiveAt: dateOrNull(r.effective_at),
    signatures: r.signatures.map((s) => ({ userId: s.userId, email: s.email, role: s.role, signedAt: new Date(s.signedAt) })),
  };
}

/** A company's approval-policy versions on Postgres (schema `transfer`, migration 0016), in plain SQL. */
export class SqlPolicyStore implements PolicyStore {
  constructor(private readonly db: Database) {}

  /** One version with its signatures, read with the pool or inside a transaction. */
  private async view(run: Database | PreparedTx, where: string, params: unknown[]): Promise<PolicyVersionRecord | undefined> {
    const sql = `${VIEW} ${where}`;
    const rows = 'preparedTx' in run ? await run.prepared<PolicyRow>(sql, params) : await run.query<PolicyRow>(sql, params);
    return rows[0] && toRecord(rows[0]);
  }

  async propose(
    companyId: string,
    id: string,
    document: PolicyDocumentJson,
    requiredSignatures: number,
    proposer: Signer,
    note: string | null,
  ): Promise<ProposeOutcome> {
    try {
      return await this.db.preparedTx(async (tx) => {
        // The company's versions are numbered in order: `max + 1` without a lock is made safe by the
        // unique (company_id, version) and the one-PROPOSED index (a concurrent proposal fails on either).
        await tx.query(
          `insert into transfer.approval_policies (id, company_id, version, document, status, required_signatures, proposed_by, proposed_by_email, note)
           select $1, $2, coalesce(max(version), 0) + 1, $3::jsonb, 'PROPOSED', $4, $5, $6, $7 from transfer.approval_policies where company_id = $2`,
          [id, companyId, JSON.stringify(document), requiredSignatures, proposer.userId, proposer.email, note],
        );
        await tx.query(`insert into transfer.approval_policy_signatures (policy_id, user_id, email, role) values ($1, $2, $3, $4)`, [
          id,
          proposer.userId,
          proposer.email,
          proposer.role,
        ]);
        return { kind: 'proposed' as const, policy: (await this.view(tx, 'where p.id = $1', [id]))! };
      });
    } catch (err) {
      if (isUniqueViolation(err)) return { kind: 'proposal_pending' };
      throw err;
    }
  }

  async sign(
    companyId: string,
    id: string,
    signer: Signer,
    delayMs: number,
    precheck: boolean,
    event: (p: PolicyVersionRecord, previousVersion: number) => OutboxEvent,
  ): Promise<SignPolicyOutcome> {
    return this.db.preparedTx(async (tx) => {
      const [row] = await tx.query<{ status: PolicyStatus; required_signatures: number }>(
        `select status, required_signatures from transfer.approval_policies where id = $1 and company_id = $2 for update`,
        [id, companyId],
      );
      if (!row) return { kind: 'not_found' };
      const [mine] = await tx.query('select 1 from transfer.approval_policy_signatures where policy_id = $1 and user_id = $2', [id, signer.userId]);
      if (mine) return { kind: 'already_signed' };
      if (row.status !== 'PROPOSED') return { kind: 'not_pending' };
      if (precheck) return { kind: 'may_sign' };
      await tx.query(`insert into transfer.approval_policy_signatures (policy_id, user_id, email, role) values ($1, $2, $3, $4)`, [
        id,
        signer.userId,
        signer.email,
        signer.role,
      ]);
      const [{ n }] = (await tx.query<{ n: number }>('select count(*)::int as n from transfer.approval_policy_signatures where policy_id = $1', [id])) as [
        { n: number },
      ];
      const quorum = n >= row.required_signatures;
      if (quorum) {
        await tx.query(
          `update transfer.approval_policies set status = 'APPROVED', decided_at = now(), decided_by = $2,
             effective_at = now() + ($3::bigint * interval '1 millisecond') where id = $1`,
          [id, signer.email, String(Math.max(0, Math.round(delayMs)))],
        );
      }
      const policy = (await this.view(tx, 'where p.id = $1', [id]))!;
      if (quorum) {
        const [prev] = await tx.query<{ v: number | null }>(
          `select max(version) as v from transfer.approval_policies where company_id = $1 and status = 'APPROVED' and version < $2`,
          [companyId, policy.version],
        );
        const e = event(policy, prev?.v ?? 0);
        await tx.query(`insert into transfer.outbox (id, subject, payload, headers) values ($1::uuid, $2, $3::jsonb, $4::jsonb)`, [
          e.id,
          e.subject,
          JSON.stringify(e.payload),
          JSON.stringify(e.traceparent ? { traceparent: e.traceparent } : {}),
        ]);
      }
      return { kind: 'signed', policy, quorum };
    });
  }

  async cancel(companyId: string, id: string, by: Signer, precheck: boolean): Promise<CancelPolicyOutcome> {
    return this.db.preparedTx(async (tx) => {
      const [row] = await tx.query<{ status: PolicyStatus }>(`select status from transfer.approval_policies where id = $1 and company_id = $2 for update`, [
        id,
        companyId,
      ]);
      if (!row) return { kind: 'not_found' };
      if (row.status !== 'PROPOSED') return { kind: 'not_pending' };
      if (!precheck) {
        await tx.query(`update transfer.approval_policies set status = 'CANCELLED', decided_at = now(), decided_by = $2 where id = $1`, [id, by.email]);
      }
      return { kind: 'cancelled', policy: (await this.view(tx, 'where p.id = $1', [id]))! };
    });
  }

  async get(companyId: string, id: string): Promise<PolicyVersionRecord | undefined> {
    return this.view(this.db, 'where p.id = $1 and p.company_id = $2', [id, companyId]);
  }

  async list(companyId: string, limit: number, beforeVersion: number | null): Promise<PolicyVersionRecord[]> {
    const rows = await this.db.prepared<PolicyRow>(
      `${VIEW} where p.company_id = $1 and ($3::int is null or p.version < $3::int) order by p.version desc limit $2`,
      [companyId, String(limit), beforeVersion],
    );
    return rows.map(toRecord);
  }

  async proposed(companyId: string): Promise<PolicyVersionRecord | undefined> {
    return this.view(this.db, `where p.company_id = $1 and p.status = 'PROPOSED'`, [companyId]);
  }

  async fromInstant(companyId: string, at: Date): Promise<PolicyVersionRecord[]> {
    const rows = await this.db.prepared<PolicyRow>(`${VIEW} where ${FROM_INSTANT('p')} order by p.version`, [companyId, at.toISOString()]);
    return rows.map(toRecord);
  }

  async decidingVersions(companyId: string, at: Date): Promise<DecidingVersion[]> {
    const rows = await this.db.prepared<{ id: string; version: number; document: PolicyDocumentJson; effective_at: Date | string }>(
      `select p.id, p.version, p.document, p.effective_at from transfer.approval_policies p where ${FROM_INSTANT('p')} order by p.version`,
      [companyId, at.toISOString()],
    );
    return rows.map((r) => ({ id: r.id, version: r.version, document: r.document, effectiveAt: date(r.effective_at) }));
  }

  async paidBefore(companyId: string, destinationFingerprint: string): Promise<boolean> {
    const rows = await this.db.prepared(
      `select 1 from transfer.transfers where company_id = $1 and destination_fingerprint = $2 and state = 'COMPLETED' limit 1`,
      [companyId, destinationFingerprint],
    );
    return rows.length > 0;
  }

  async paidBeforeMany(companyId: string, destinationFingerprints: string[]): Promise<Set<string>> {
    if (destinationFingerprints.length === 0) return new Set();
    const rows = await this.db.prepared<{ fp: string }>(
      `select distinct destination_fingerprint as fp from transfer.transfers
        where company_id = $1 and destination_fingerprint = any($2::text[]) and state = 'COMPLETED'`,
      [companyId, [...new Set(destinationFingerprints)]],
    );
    return new Set(rows.map((r) => r.fp));
  }

  async claimDayTotal(companyId: string, day: string, amount: bigint): Promise<bigint> {
    // The day's row is added to; only the day's first claim starts it from what the company already
    // sent that day (sends decided before a cumulative rule was in force count too): that sum is
    // computed only when no row was there (the insert's one-time filter), never on every send.
    const [row] = await this.db.prepared<{ total: string }>(
      `with u as (
         update transfer.policy_day_totals set sent_cents = sent_cents + $3::bigint
          where company_id = $1 and day = $2::date returning sent_cents),
       i as (
         insert into transfer.policy_day_totals (company_id, day, sent_cents)
         select $1, $2::date, ${sentToday('$4')} + $3::bigint where not exists (select 1 from u)
         on conflict (company_id, day) do update set sent_cents = transfer.policy_day_totals.sent_cents + $3::bigint
         returning sent_cents)
       select sent_cents::text as total from u union all select sent_cents::text from i`,
      [companyId, day, amount.toString(), COUNTED],
    );
    return BigInt(row!.total);
  }

  async dayTotal(companyId: string, day: string): Promise<bigint> {
    const [row] = await this.db.prepared<{ total: string }>(
      `select coalesce((select sent_cents from transfer.policy_day_totals where company_id = $1 and day = $2::date), ${sentToday('$3')})::text as total`,
      [companyId, day, COUNTED],
    );
    return BigInt(row!.total);
  }

  async releaseDayTotal(companyId: string, day: string, amount: bigint): Promise<void> {
    await this.db.prepared(`update transfer.policy_day_totals set sent_cents = greatest(sent_cents - $3::bigint, 0) where company_id = $1 and day = $2::date`, [
      companyId,
      day,
      amount.toString(),
    ]);
  }
}
