import type { Database, SecretBox } from '@wallet/platform';

/**
 * IN_FLIGHT: a request holds the key (until `locked_until`); DONE: its final answer, replayed until
 * `expires_at`; UNKNOWN (routes bound to their downstream by the key only): the request ended without
 * a known outcome, the key stays bound to it until `expires_at` and the same request may run again.
 */
export type IdempotencyState = 'IN_FLIGHT' | 'DONE' | 'UNKNOWN';

export interface IdempotencyClaim {
  companyId: string;
  key: string;
  method: string;
  path: string;
  requestHash: string;
  claimId: string;
  lockSeconds: number;
  ttlSeconds: number;
  /**
   * A route whose downstream is idempotent by the key (`idempotent: 'bound'`): a row of the same
   * request that is IN_FLIGHT or UNKNOWN is taken over at once (the request runs again; the
   * downstream answers what the key already made). `plainHash`: the unkeyed hash, so a row stored
   * before fingerprints still counts as the same request.
   */
  sameRequestTakeover?: { plainHash: string };
}

/** The live row that holds a key (another request's claim or a stored answer). */
export interface IdempotencyRecord {
  state: IdempotencyState;
  method: string;
  requestHash: string;
  statusCode: number | null;
  responseBody: unknown;
  responseHeaders: Record<string, string> | null;
}

interface Row {
  state: IdempotencyState;
  method: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  response_headers: Record<string, string> | null;
}

/**
 * `gateway.idempotency_keys`. Every statement is a single atomic one on the pool (prepared), with
 * the database clock deciding expiry and locks, so replicas with skewed clocks agree.
 */
export class IdempotencyKeyStore {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  /**
   * Takes the key for this request: inserts an IN_FLIGHT row, or takes over a row that no longer
   * counts (a stored answer or an UNKNOWN mark past `expires_at`, or an IN_FLIGHT claim past
   * `locked_until` left by a crashed replica), or, with `sameRequestTakeover`, an IN_FLIGHT or
   * UNKNOWN row of the same request. True when this request now holds the key.
   */
  async claim(c: IdempotencyClaim): Promise<boolean> {
    const rows = await this.db.prepared<{ claim_id: string }>(
      `insert into gateway.idempotency_keys as k
         (company_id, key, method, path, request_hash, state, claim_id, created_at, locked_until, expires_at)
       values ($1, $2, $3, $4, $5, 'IN_FLIGHT', $6, now(), now() + make_interval(secs => $7), now() + make_interval(secs => $8))
       on conflict (company_id, key) do update set
         method = excluded.method, path = excluded.path, request_hash = excluded.request_hash, state = 'IN_FLIGHT',
         claim_id = excluded.claim_id, status_code = null, response_body = null, response_headers = null,
         created_at = excluded.created_at, locked_until = excluded.locked_until, expires_at = excluded.expires_at
       where (k.state in ('DONE', 'UNKNOWN') and k.expires_at <= now()) or (k.state = 'IN_FLIGHT' and k.locked_until <= now())
          or ($9::boolean and k.state in ('IN_FLIGHT', 'UNKNOWN') and k.method = excluded.method and k.request_hash in (excluded.request_hash, $10))
       returning claim_id::text as claim_id`,
      [
        c.companyId,
        c.key,
        c.method,
        c.path,
        c.requestHash,
        c.claimId,
        c.lockSeconds,
        c.ttlSeconds,
        c.sameRequestTakeover !== undefined,
        c.sameRequestTakeover?.plainHash ?? null,
      ],
    );
    return rows[0]?.claim_id === c.claimId;
  }

  /** The row holding the key, if it still counts (a stale or expired row reads as absent). */
  async findLive(companyId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const rows = await this.db.prepared<Row>(
      `select state, method, request_hash, status_code, response_body, response_headers
         from gateway.idempotency_keys
        where company_id = $1 and key = $2
          and ((state in ('DONE', 'UNKNOWN') and expires_at > now()) or (state = 'IN_FLIGHT' and locked_until > now()))`,
      [companyId, key],
    );
    const r = rows[0];
    if (!r) return undefined;
    return {
      state: r.state,
      method: r.method,
      requestHash: r.request_hash,
      statusCode: r.status_code,
      responseBody: r.response_body === null ? null : JSON.parse(this.box.open(r.response_body)),
      responseHeaders: r.response_headers,
    };
  }

  /** Stores the final answer under this request's claim (no-op if the claim was lost). */
  async complete(companyId: string, key: string, claimId: string, answer: { status: number; body: string; headers: Record<string, string> }): Promise<boolean> {
    const rows = await this.db.prepared<{ key: string }>(
      `update gateway.idempotency_keys
          set state = 'DONE', status_code = $4, response_body = $5, response_headers = $6::jsonb
        where company_id = $1 and key = $2 and claim_id = $3 and state = 'IN_FLIGHT'
        returning key`,
      [companyId, key, claimId, answer.status, this.box.seal(answer.body), JSON.stringify(answer.headers)],
    );
    return rows.length === 1;
  }

  /**
   * The request ended without a known outcome (`idempotent: 'bound'` routes): the row stays, bound
   * to this request until `expires_at`, and no longer locks the key (no-op if the claim was lost).
   */
  async markUnknown(companyId: string, key: string, claimId: string): Promise<boolean> {
    const rows = await this.db.prepared<{ key: string }>(
      `update gateway.idempotency_keys set state = 'UNKNOWN', locked_until = now()
        where company_id = $1 and key = $2 and claim_id = $3 and state = 'IN_FLIGHT'
        returning key`,
      [companyId, key, claimId],
    );
    return rows.length === 1;
  }

  /** Drops this request's claim so that a retry runs normally. */
  async release(companyId: string, key: string, claimId: string): Promise<void> {
    await this.db.prepared(`delete from gateway.idempotency_keys where company_id = $1 and key = $2 and claim_id = $3 and state = 'IN_FLIGHT'`, [
      companyId,
      key,
      claimId,
    ]);
  }

  /**
   * One batch of the purge: deletes up to `limit` rows that no longer count (an answer or UNKNOWN
   * mark past `expires_at`; a claim also past `locked_until`), oldest expiry first, from `from` on
   * (the previous batch's `upTo`: each batch starts where the last one stopped instead of walking
   * again over the index entries it just deleted). One autocommit statement, so it holds its row
   * locks only while it runs.
   *
   * It never waits on a row and never deletes a row someone holds: the rows are picked with
   * `for update skip locked` and deleted by `ctid` under that lock, so
   * - a claim taking over an expired key at that moment (its `insert … on conflict do update` holds
   *   the row) is skipped, and the key it claims is live once it commits;
   * - another replica's purge batch holds its own rows and this one takes the next ones;
   * - a row renewed by a claim that committed since the statement started is re-read under the lock
   *   with its new `expires_at`, fails the condition and is left alone.
   * The only wait left is the other way round: a claim of a key this batch is deleting waits until
   * the statement commits (milliseconds: docs/benchmarks.md, "Idempotency keys kept 30 days"), then
   * inserts the key afresh. Live keys are never touched, so a replay or a claim of a live key never
   * meets the purge.
   */
  async purgeExpiredBatch(limit: number, from: string | null = null): Promise<{ deleted: number; upTo: string | null }> {
    const rows = await this.db.prepared<{ n: number; up_to: string | null }>(
      `with gone as (
         delete from gateway.idempotency_keys
          where ctid = any(array(
            select ctid from gateway.idempotency_keys
             where expires_at <= now() and expires_at >= coalesce($2::timestamptz, '-infinity')
               and (state <> 'IN_FLIGHT' or locked_until <= now())
             order by expires_at
             limit $1
             for update skip locked))
         returning expires_at)
       select count(*)::int as n, max(expires_at)::text as up_to from gone`,
      [limit, from],
    );
    return { deleted: rows[0]?.n ?? 0, upTo: rows[0]?.up_to ?? null };
  }

  /**
   * Deletes every row that no longer counts, in batches of `batch` (each its own statement, see
   * `purgeExpiredBatch`), until a batch comes back short or `stopping()` says so; returns how many.
   * Safe to run on every replica at once. Rows skipped because someone held them are left for the
   * next run.
   */
  async purgeExpired(opts: { batch?: number; stopping?: () => boolean } = {}): Promise<number> {
    const batch = opts.batch ?? PURGE_BATCH;
    let total = 0;
    let from: string | null = null;
    for (;;) {
      const { deleted, upTo } = await this.purgeExpiredBatch(batch, from);
      total += deleted;
      if (deleted < batch || opts.stopping?.()) return total;
      from = upTo;
    }
  }
}

/** Rows per purge statement: small, so that a claim meeting one waits milliseconds (docs/benchmarks.md). */
export const PURGE_BATCH = 500;
