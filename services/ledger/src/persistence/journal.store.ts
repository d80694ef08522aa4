import { addDays, appendOutbox, sqlInstant, type Database } from '@wallet/platform';
import type { OutboxEvent } from '../app/ports.js';
import type { JournalPort, RecordedHead, SealOutcome } from '../app/journal.js';
import { OLDEST_OPEN_TRANSACTION } from './checkpoint.store.js';
import { GENESIS, contentHash, linkHash, type JournalHead, type JournalPosting, type SealedRow } from '../domain/journal.js';

/** The sealer's advisory lock (one sealer at a time across replicas): a stable 64-bit key. */
const SEAL_LOCK = 0x6a6f75726e616c; // 'journal'

const BOGOTA = 'America/Bogota';

/** Days a pass closes at most (a ledger stopped longer catches up over the next passes). */
const MAX_DAYS_PER_PASS = 31;

/** A posting's columns and entries, as the canonical content reads them (`p` is ledger.postings). */
const POSTING_COLUMNS = `p.id::text as id, p.idempotency_key, p.request_hash, p.kind, p.company_id, p.rail,
  p.movement_id::text as movement_id, p.hold_id::text as hold_id, p.reason, p.corrects, p.case_id,
  p.reverses_posting_id::text as reverses_posting_id, ${sqlInstant('p.created_at')} as created_at,
  coalesce((select json_agg(json_build_object('seq', e.seq, 'account', e.account, 'amount', e.amount::text) order by e.seq)
              from ledger.entries e where e.posting_id = p.id), '[]'::json) as entries`;

interface PostingRow {
  id: string;
  idempotency_key: string;
  request_hash: string;
  kind: string;
  company_id: string;
  rail: string;
  movement_id: string | null;
  hold_id: string | null;
  reason: string | null;
  corrects: string | null;
  case_id: string | null;
  reverses_posting_id: string | null;
  created_at: string;
  entries: Array<{ seq: number; account: string; amount: string }>;
}

function posting(r: PostingRow): JournalPosting {
  return {
    id: r.id,
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    kind: r.kind,
    companyId: r.company_id,
    rail: r.rail,
    movementId: r.movement_id,
    holdId: r.hold_id,
    reason: r.reason,
    corrects: r.corrects,
    caseId: r.case_id,
    reversesPostingId: r.reverses_posting_id,
    createdAt: r.created_at,
    entries: r.entries.map((e) => ({ seq: Number(e.seq), account: e.account, amount: String(e.amount) })),
  };
}

/**
 * The journal's tables (migration 0013, docs/journal.md): the queue every posting statement writes
 * to, the chain the sealer appends to, the daily heads.
 */
export class JournalStore implements JournalPort {
  constructor(private readonly db: Database) {}

  /**
   * One pass of the sealer: under the advisory lock, the oldest `limit` queued postings are hashed
   * onto the chain's head, appended and dequeued in ONE transaction (sealed exactly once, or not at
   * all). Then the heads of the days up to `closeDay` (a Bogotá day, YYYY-MM-DD) not recorded yet, from
   * the day after the last recorded one, each once no posting created on or before it is still queued
   * and no transaction that began before its end is still open, each with `headEvent`'s event.
   */
  seal(limit: number, closeDay: string | null, headEvent: (h: JournalHead & { day: string }) => OutboxEvent): Promise<SealOutcome> {
    return this.db.tx(async (tx) => {
      const [lock] = await tx.query<{ ok: boolean }>('select pg_try_advisory_xact_lock(?::bigint) as ok', [SEAL_LOCK]);
      if (!lock?.ok) return { locked: false, sealed: 0, head: GENESIS, recorded: [] };
      const [tip] = await tx.query<{ seq: string; hash: string }>(
        `select j.seq::text as seq, encode(j.hash, 'hex') as hash from ledger.journal j order by j.seq desc limit 1`,
      );
      let seq = tip ? BigInt(tip.seq) : 0n;
      let previous: Buffer = Buffer.from(tip?.hash ?? GENESIS.hash, 'hex');
      const rows = await tx.query<PostingRow & { n: string }>(
        `select q.n::text as n, ${POSTING_COLUMNS}
           from (select n, posting_id from ledger.journal_queue order by n limit ?) q
           join ledger.postings p on p.id = q.posting_id
          order by q.n`,
        [limit],
      );
      if (rows.length > 0) {
        const seqs: string[] = [];
        const ids: string[] = [];
        const contents: string[] = [];
        const hashes: string[] = [];
        for (const r of rows) {
          const content = contentHash(posting(r));
          previous = linkHash(previous, content);
          seq += 1n;
          seqs.push(seq.toString());
          ids.push(r.id);
          contents.push(content.toString('hex'));
          hashes.push(previous.toString('hex'));
        }
        await tx.query(
          `insert into ledger.journal (seq, posting_id, content_hash, hash)
           select t.seq, t.posting_id, decode(t.content, 'hex'), decode(t.hash, 'hex')
             from unnest(array[?]::bigint[], array[?]::uuid[], array[?]::text[], array[?]::text[]) as t(seq, posting_id, content, hash)`,
          [seqs, ids, contents, hashes],
        );
        await tx.query('delete from ledger.journal_queue where n = any(array[?]::bigint[])', [rows.map((r) => r.n)]);
      }
      const head: JournalHead = { seq, hash: previous.toString('hex') };
      const out: SealOutcome = { locked: true, sealed: rows.length, head, recorded: [] };
      if (closeDay !== null) {
        // The days to close, oldest first: from the day after the last recorded head (a day no pass closed,
        // the ledger stopped across it, gets its head now), or `closeDay` alone on a journal without heads;
        // each once no posting created up to its end is still queued. A day's head is the chain's head when
        // it is recorded: it covers every posting of that day and of the days before.
        const [last] = await tx.query<{ day: string | null }>(`select to_char(max(day), 'YYYY-MM-DD') as day from ledger.journal_heads`);
        let day = last?.day ? addDays(last.day, 1) : closeDay;
        for (let n = 0; day <= closeDay && n < MAX_DAYS_PER_PASS; n++, day = addDays(day, 1)) {
          // Open: a posting of the day still queued, or a transaction that began before the day's end still
          // running (a posting it writes is dated that day and would commit after the head).
          const [open] = await tx.query<{ open: boolean }>(
            `with d as (select ((?::date + 1)::timestamp at time zone '${BOGOTA}') as day_end)
             select exists (select 1 from ledger.journal_queue q join ledger.postings p on p.id = q.posting_id, d
                             where p.created_at < d.day_end)
                 or coalesce((${OLDEST_OPEN_TRANSACTION}) < (select day_end from d), false) as open`,
            [day],
          );
          if (open?.open) break;
          await tx.query(`insert into ledger.journal_heads (day, seq, hash) values (?::date, ?::bigint, decode(?, 'hex'))`, [day, seq.toString(), head.hash]);
          const recorded = { ...head, day };
          const ev = headEvent(recorded);
          await appendOutbox(tx, 'ledger', { id: ev.id, subject: ev.subject, payload: ev.payload, ...(ev.traceparent ? { traceparent: ev.traceparent } : {}) });
          out.recorded.push(recorded);
        }
      }
      return out;
    });
  }

  /** The stored hash at a position (undefined: no such position). */
  async hashAt(seq: bigint): Promise<string | undefined> {
    if (seq === 0n) return GENESIS.hash;
    const [r] = await this.db.query<{ hash: string }>(`select encode(hash, 'hex') as hash from ledger.journal where seq = ?::bigint`, [seq.toString()]);
    return r?.hash;
  }

  /** Sealed rows after `afterSeq`, in order, each with its posting as it is now (a keyset page). */
  async sealedPage(afterSeq: bigint, limit: number): Promise<SealedRow[]> {
    const rows = await this.db.query<Partial<PostingRow> & { seq: string; posting_id: string; content_hash: string; hash: string; found: boolean }>(
      `select j.seq::text as seq, j.posting_id::text as posting_id, encode(j.content_hash, 'hex') as content_hash,
              encode(j.hash, 'hex') as hash, p.id is not null as found, ${POSTING_COLUMNS}
         from (select * from ledger.journal where seq > ?::bigint order by seq limit ?) j
         left join ledger.postings p on p.id = j.posting_id
        order by j.seq`,
      [afterSeq.toString(), limit],
    );
    return rows.map((r) => ({
      seq: BigInt(r.seq),
      postingId: r.posting_id,
      contentHash: Buffer.from(r.content_hash, 'hex'),
      hash: Buffer.from(r.hash, 'hex'),
      posting: r.found ? posting(r as PostingRow) : null,
    }));
  }

  /** Committed postings not yet sealed. */
  async pending(): Promise<number> {
    const [r] = await this.db.query<{ n: string }>('select count(*)::text as n from ledger.journal_queue');
    return Number(r?.n ?? 0);
  }

  /**
   * Postings neither sealed nor queued: written around the ledger's statements (by hand, by a
   * superuser), so never part of the chain. At most `limit`, oldest first.
   */
  async outsideJournal(limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `select p.id::text as id from ledger.postings p
        where not exists (select 1 from ledger.journal j where j.posting_id = p.id)
          and not exists (select 1 from ledger.journal_queue q where q.posting_id = p.id)
        order by p.created_at, p.id limit ?`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /** Recorded daily heads, oldest first; optionally only those of Bogotá days in [fromDay, toDay]. */
  async heads(fromDay?: string, toDay?: string): Promise<RecordedHead[]> {
    const rows = await this.db.query<{ day: string; seq: string; hash: string; recorded_at: string }>(
      `select to_char(h.day, 'YYYY-MM-DD') as day, h.seq::text as seq, encode(h.hash, 'hex') as hash, ${sqlInstant('h.recorded_at')} as recorded_at
         from ledger.journal_heads h
        where (?::date is null or h.day >= ?::date) and (?::date is null or h.day <= ?::date)
        order by h.day`,
      [fromDay ?? null, fromDay ?? null, toDay ?? null, toDay ?? null],
    );
    return rows.map((r) => ({ day: r.day, seq: BigInt(r.seq), hash: r.hash, recordedAt: r.recorded_at }));
  }
}
