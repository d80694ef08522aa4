import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * The tamper-evident journal (docs/journal.md). Every posting is sealed into ONE ledger-wide hash
 * chain, in the order the sealer takes them:
 *
 *   contentHash(p) = SHA-256( RFC 8785 (JCS) canonical JSON of the posting and its entries )
 *   hash(n)        = SHA-256( hash(n-1) ‖ contentHash(n) )        (32 + 32 bytes; hash(0) = 32 zero bytes)
 *
 * An auditor re-implements this with any JCS library and SHA-256: no format of our own. The
 * canonical content holds every column of the posting and of its entries, so an edit of any of
 * them (amount, account, company, kind, instant, key…) changes the content hash of that posting;
 * a deleted, inserted or reordered journal row breaks the link of the next one.
 */

/** Bumped if the canonical content ever changes; verification reads each posting's own version. */
export const JOURNAL_CONTENT_VERSION = 1;

/** hash(0): the chain's genesis. */
export const GENESIS_HASH: Buffer = Buffer.alloc(32);

/** A posting as stored, with its entries in seq order: the canonical content's input. */
export interface JournalPosting {
  id: string;
  idempotencyKey: string;
  requestHash: string;
  kind: string;
  companyId: string;
  rail: string;
  movementId: string | null;
  holdId: string | null;
  reason: string | null;
  corrects: string | null;
  caseId: string | null;
  reversesPostingId: string | null;
  /** ISO 8601 UTC with microseconds, as the database holds it (e.g. 2026-11-30T04:05:03.123456Z). */
  createdAt: string;
  entries: ReadonlyArray<{ seq: number; account: string; amount: string }>;
}

/** The canonical JSON text (RFC 8785) of a posting: what its content hash is taken over. */
export function canonicalContent(p: JournalPosting): string {
  const text = canonicalize({
    v: JOURNAL_CONTENT_VERSION,
    id: p.id,
    idempotencyKey: p.idempotencyKey,
    requestHash: p.requestHash,
    kind: p.kind,
    companyId: p.companyId,
    rail: p.rail,
    movementId: p.movementId,
    holdId: p.holdId,
    reason: p.reason,
    corrects: p.corrects,
    caseId: p.caseId,
    reversesPostingId: p.reversesPostingId,
    createdAt: p.createdAt,
    // amounts as decimal strings (centavos, signed): exact whatever their size
    entries: p.entries.map((e) => ({ seq: e.seq, account: e.account, amount: e.amount })),
  });
  if (text === undefined) throw new Error('posting has no canonical form');
  return text;
}

// node:crypto's one-shot hash: the same SHA-256, without a Hash object per call (about half the cost)
export function contentHash(p: JournalPosting): Buffer {
  return hash('sha256', canonicalContent(p), 'buffer');
}

/** The chain's link: hash(n) from hash(n-1) and the posting's content hash. */
export function linkHash(previous: Buffer, content: Buffer): Buffer {
  return hash('sha256', Buffer.concat([previous, content], 64), 'buffer');
}

/** A point of the chain: after `seq` postings, the chain's hash is `hash` (hex). A trusted head. */
export interface JournalHead {
  seq: bigint;
  hash: string;
}

export const GENESIS: JournalHead = { seq: 0n, hash: GENESIS_HASH.toString('hex') };

/** Why a posting fails verification (docs/journal.md "Verifying"). */
export type JournalBreak =
  /** the posting's rows (or its entries) no longer hash to the sealed content hash: edited */
  | 'CONTENT_CHANGED'
  /** the sealed posting is gone (deleted) */
  | 'POSTING_MISSING'
  /** the journal row's hash is not hash(previous ‖ content): the journal itself was edited, or a row inserted/reordered */
  | 'LINK_BROKEN'
  /** a journal position is missing (a row deleted) */
  | 'SEQUENCE_GAP'
  /** the chain at a trusted or recorded head's position does not have the head's hash */
  | 'HEAD_MISMATCH';

export interface BrokenPosting {
  seq: bigint;
  postingId: string | null;
  reason: JournalBreak;
}

/** A sealed row with the posting as it is now (null when the posting is gone). */
export interface SealedRow {
  seq: bigint;
  postingId: string;
  contentHash: Buffer;
  hash: Buffer;
  posting: JournalPosting | null;
}

/**
 * Walks sealed rows in seq order from a trusted head, recomputing every content hash and link.
 * Pure and incremental (rows are fed in pages); the first break is kept, the rest counted. After a
 * break the walk goes on from the stored hash, so one edited posting is reported once, not as the
 * break of every posting after it.
 */
export class ChainVerifier {
  private previous: Buffer;
  private expectedSeq: bigint;
  first: BrokenPosting | null = null;
  broken = 0;
  checked = 0;

  constructor(from: JournalHead) {
    this.previous = Buffer.from(from.hash, 'hex');
    if (this.previous.length !== 32) throw new Error('a head hash is 32 bytes (64 hex digits)');
    this.expectedSeq = from.seq + 1n;
  }

  /** The head after the rows fed so far (what the chain stores, whatever was found broken). */
  get head(): JournalHead {
    return { seq: this.expectedSeq - 1n, hash: this.previous.toString('hex') };
  }

  private fail(seq: bigint, postingId: string | null, reason: JournalBreak): void {
    this.broken += 1;
    if (!this.first) this.first = { seq, postingId, reason };
  }

  feed(row: SealedRow): void {
    this.checked += 1;
    if (row.seq !== this.expectedSeq) this.fail(this.expectedSeq, null, 'SEQUENCE_GAP');
    if (!row.posting) this.fail(row.seq, row.postingId, 'POSTING_MISSING');
    else if (row.posting.id !== row.postingId || !contentHash(row.posting).equals(row.contentHash)) {
      this.fail(row.seq, row.postingId, 'CONTENT_CHANGED');
    }
    if (!linkHash(this.previous, row.contentHash).equals(row.hash)) this.fail(row.seq, row.postingId, 'LINK_BROKEN');
    this.previous = row.hash;
    this.expectedSeq = row.seq + 1n;
  }

  /** A head the chain must pass through (a recorded daily head), checked once the walk reaches it. */
  checkHead(head: JournalHead): boolean {
    if (head.seq !== this.expectedSeq - 1n) throw new Error('checkHead at another position');
    if (this.previous.toString('hex') === head.hash) return true;
    this.fail(head.seq, null, 'HEAD_MISMATCH');
    return false;
  }
}
