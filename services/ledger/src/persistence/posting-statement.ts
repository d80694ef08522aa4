import type { BatchPostingWrite, PostingWrite } from '../app/ports.js';
import { holdCols, isoUs, movementCols } from './rows.js';

/**
 * Renders a posting as ONE SQL statement of data-modifying CTEs, so it commits atomically in a
 * single round trip and holds the wallet's row lock only for that statement and its commit.
 *
 * `g` is the guard; every other write selects `from g` (or checks `exists (select 1 from g)`), so
 * when the guard matches no row nothing at all is written:
 *   - closing a hold (commit/release): `update holds … where status = 'OPEN'` — of two concurrent
 *     closes of one hold only one can match;
 *   - else a wallet change: `update wallets … where available_cents >= T` for a debit (the
 *     conditional reserve: no read-modify-write, never negative), unconditional for a credit
 *     (matches nothing when the wallet does not exist);
 *   - else (an unassigned inflow touches no wallet) a constant row.
 * The idempotency key, the movement id and the outbox id are unique: a concurrent twin makes the
 * statement fail as a whole with a unique violation, and the caller reads the winner.
 * The outbox insert is the same row `appendOutbox` writes, inlined to stay in the one statement.
 */
export function postingStatement(w: PostingWrite): { sql: string; params: unknown[] } {
  const ctes: string[] = [];
  const params: unknown[] = [];
  const add = (name: string, sql: string, ps: unknown[]) => {
    ctes.push(`${name} as (${sql})`);
    params.push(...ps);
  };

  let holdSource: string | null = null;
  if (w.closeHold) {
    const h = w.closeHold;
    const x = h.expect;
    add(
      'g',
      `update ledger.holds set status = ?, closed_at = now()
      where id = ?::uuid and company_id = ? and status = 'OPEN'${
        x
          ? `
        and rail = ? and amount = ?::bigint and fee = ?::bigint and iva = ?::bigint and fee_operation = ? and movement_id = ?::uuid and return_of is null
        and exists (select 1 from ledger.movements m where m.id = ledger.holds.movement_id and m.status = any(?::text[]))`
          : ''
      }
      returning ${holdCols()}`,
      [
        h.status,
        h.id,
        h.companyId,
        ...(x ? [x.rail, x.amount.toString(), x.fee.toString(), x.iva.toString(), x.feeOperation, x.movementId, [...x.movementStatuses]] : []),
      ],
    );
    holdSource = 'g';
    if (w.wallet) {
      const set = walletSet(w.wallet.availableDelta, w.wallet.pendingOutDelta);
      add(
        'w',
        `update ledger.wallets set ${set.sql}
        where company_id = ? and rail = ? and exists (select 1 from g) returning version`,
        [...set.params, w.wallet.companyId, w.wallet.rail],
      );
    }
  } else if (w.reverseMovement) {
    const r = w.reverseMovement;
    const details = r.errorMessage !== null ? `details || jsonb_build_object('errorMessage', ?::text)` : 'details';
    add(
      'g',
      `update ledger.movements set status = 'REVERSED', updated_at = now(), details = ${details}
      where id = ?::uuid and company_id = ? and type = 'TRANSFER_IN' and status = 'COMPLETED' and move_id is null and returned_cents = 0
      returning ${movementCols()}`,
      [...(r.errorMessage !== null ? [r.errorMessage] : []), r.id, r.companyId],
    );
    if (w.wallet) {
      const set = walletSet(w.wallet.availableDelta, w.wallet.pendingOutDelta);
      add(
        'w',
        `update ledger.wallets set ${set.sql}
        where company_id = ? and rail = ? and exists (select 1 from g) returning version`,
        [...set.params, w.wallet.companyId, w.wallet.rail],
      );
    }
  } else if (w.wallet) {
    const set = walletSet(w.wallet.availableDelta, w.wallet.pendingOutDelta);
    const debit = w.wallet.availableDelta < 0n ? -w.wallet.availableDelta : 0n;
    const claim = w.returnClaim && w.returnClaim.delta > 0n ? w.returnClaim : undefined;
    if (claim) {
      // A return's Reserve: its claim on the inflow first (the inflow's row lock; re-checked on the
      // row as it is after a concurrent claim commits), the wallet's debit only if it held. The
      // caller runs this in a transaction and rolls it back when the debit is refused.
      add(
        'rc',
        `update ledger.movements set returned_cents = returned_cents + ?::bigint, updated_at = now()
        where id = ?::uuid and company_id = ? and type = 'TRANSFER_IN' and status = 'COMPLETED' and move_id is null
          and returned_cents + ?::bigint <= amount returning id`,
        [claim.delta.toString(), claim.movementId, claim.companyId, claim.delta.toString()],
      );
    }
    add(
      'g',
      `update ledger.wallets set ${set.sql}
      where company_id = ? and rail = ?${debit > 0n ? ' and available_cents >= ?::bigint' : ''}${claim ? ' and exists (select 1 from rc)' : ''} returning version`,
      [...set.params, w.wallet.companyId, w.wallet.rail, ...(debit > 0n ? [debit.toString()] : [])],
    );
    if (w.counterWallet) {
      // A move's credited wallet (the caller locked both wallets, in rail order, and saw both exist).
      const cw = w.counterWallet;
      const cset = walletSet(cw.availableDelta, 0n);
      add(
        'w2',
        `update ledger.wallets set ${cset.sql}
        where company_id = ? and rail = ? and exists (select 1 from g) returning version`,
        [...cset.params, cw.companyId, cw.rail],
      );
    }
  } else if (w.correction?.reverses) {
    // Undoing a live correction: its register row is the guard (undone once, by one posting).
    add(
      'g',
      `update ledger.corrections set reversed_by = ?::uuid, reversed_at = now()
      where posting_id = ?::uuid and reversed_by is null returning posting_id`,
      [w.posting.id, w.correction.reverses],
    );
  } else {
    add('g', 'select 1 as one', []);
  }

  const p = w.posting;
  const c = w.correction;
  add(
    'p',
    `insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail, movement_id, hold_id, reason, corrects, case_id, reverses_posting_id)
    select ?::uuid, ?, ?, ?, ?, ?, ?::uuid, ?::uuid, ?::text, ?::text, ?::text, ?::uuid from g`,
    [
      p.id,
      p.idempotencyKey,
      p.requestHash,
      p.kind,
      p.companyId,
      p.rail,
      p.movementId,
      p.holdId,
      p.reason ?? null,
      c?.movement ?? null,
      c?.caseId ?? null,
      c?.reverses ?? null,
    ],
  );
  // Queued for the journal's sealer (docs/journal.md): committed with the posting or not at all.
  add('jq', 'insert into ledger.journal_queue (posting_id) select ?::uuid from g', [p.id]);
  if (c && !c.reverses) {
    // The live register: a second live correction of the movement is a unique violation (nothing written).
    add('c', `insert into ledger.corrections (posting_id, movement, case_id, idempotency_key) select ?::uuid, ?, ?, ? from g`, [
      p.id,
      c.movement,
      c.caseId,
      p.idempotencyKey,
    ]);
  }

  const values = w.entries.map((_, i) => `(${i + 1}, ?::text, ?::bigint)`).join(', ');
  add(
    'e',
    `insert into ledger.entries (posting_id, seq, account, amount)
    select ?::uuid, v.seq, v.account, v.amount from g cross join (values ${values}) as v(seq, account, amount)`,
    [p.id, ...w.entries.flatMap((e) => [e.account, e.amount.toString()])],
  );

  let movementSource: string | null = w.reverseMovement ? 'g' : null;
  const insertMovement = (name: string, m: NonNullable<PostingWrite['newMovement']>) =>
    add(
      name,
      `insert into ledger.movements (id, company_id, type, rail, wallet_rail, status, amount, total_fee, iva_amount,
        net_amount, reference, api_key_id, details, completed_at, move_id)
      select ?::uuid, ?, ?, ?, ?, ?, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?, ?, ?::jsonb, ${m.completed ? 'now()' : 'null'}, ?::uuid from g`,
      [
        m.id,
        m.companyId,
        m.type,
        m.rail,
        m.walletRail,
        m.status,
        m.amount.toString(),
        m.totalFee.toString(),
        m.ivaAmount.toString(),
        m.netAmount.toString(),
        m.reference,
        m.apiKeyId,
        JSON.stringify(m.details),
        m.walletMoveId ?? null,
      ],
    );
  if (w.newMovement) {
    insertMovement('m', w.newMovement);
    if (w.counterMovement) insertMovement('m2', w.counterMovement);
  } else if (w.movementUpdate) {
    const u = w.movementUpdate;
    const details = u.errorMessage !== null ? `details || jsonb_build_object('errorMessage', ?::text)` : 'details';
    add(
      'm',
      `update ledger.movements set status = ?, updated_at = now(),
        completed_at = ${u.completed ? 'now()' : 'completed_at'}, details = ${details}
      where id = ?::uuid and company_id = ? and exists (select 1 from g) returning ${movementCols()}`,
      [u.status, ...(u.errorMessage !== null ? [u.errorMessage] : []), u.id, u.companyId],
    );
    movementSource = 'm';
  }

  if (w.returnClaim && w.returnClaim.delta < 0n) {
    // A return's Release gives its claim on the inflow back, with the hold's close.
    const r = w.returnClaim;
    add(
      'rr',
      `update ledger.movements set returned_cents = returned_cents - ?::bigint, updated_at = now()
      where id = ?::uuid and company_id = ? and exists (select 1 from g) returning id`,
      [(-r.delta).toString(), r.movementId, r.companyId],
    );
  }

  if (w.newHold) {
    const h = w.newHold;
    add(
      'h',
      `insert into ledger.holds (id, company_id, rail, amount, fee, iva, total, fee_operation, movement_id, fixed_fee, return_of, return_account)
      select ?::uuid, ?, ?, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?, ?::uuid, ?::bigint, ?::uuid, ?::text from g`,
      [
        h.id,
        h.companyId,
        h.rail,
        h.amount.toString(),
        h.fee.toString(),
        h.iva.toString(),
        h.total.toString(),
        h.feeOperation,
        h.movementId,
        h.fixedFee.toString(),
        h.returnOf ?? null,
        h.returnAccount ?? null,
      ],
    );
  }

  const events = [w.event, ...(w.alsoEvents ?? [])];
  add(
    'o',
    `insert into ledger.outbox (id, subject, payload, headers)
    select v.id, v.subject,
           case when v.stamp then v.payload || jsonb_build_object('occurredAt', ${isoUs('now()')}) else v.payload end, v.headers
      from g cross join (values ${events.map(() => '(?::uuid, ?, ?::jsonb, ?::jsonb, ?::boolean)').join(', ')}) as v(id, subject, payload, headers, stamp)`,
    events.flatMap((ev) => [
      ev.id,
      ev.subject,
      JSON.stringify(ev.payload),
      JSON.stringify(ev.traceparent ? { traceparent: ev.traceparent } : {}),
      ev.occurredAtOfStatement === true,
    ]),
  );

  // Rows this statement inserts are known to the caller but for their timestamps (now(), the
  // transaction's start, also the rows' default); rows it updates come back whole.
  const sql = `with ${ctes.join(',\n')}
    select (select count(*) from g)::int as applied, ${isoUs('now()')} as now,
      ${movementSource ? `(select row_to_json(${movementSource}) from ${movementSource})` : 'null::json'} as movement,
      ${holdSource ? `(select row_to_json(${holdSource}) from ${holdSource})` : 'null::json'} as hold`;
  return { sql, params };
}

function walletSet(availableDelta: bigint, pendingDelta: bigint): { sql: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  for (const [col, d] of [
    ['available_cents', availableDelta],
    ['pending_out_cents', pendingDelta],
  ] as const) {
    if (d === 0n) continue;
    parts.push(`${col} = ${col} ${d < 0n ? '-' : '+'} ?::bigint`);
    params.push((d < 0n ? -d : d).toString());
  }
  parts.push('version = version + 1');
  return { sql: parts.join(', '), params };
}

/** A statement's parameters, numbered as they are added (`$n`), with an optional cast. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown, cast = ''): string {
    this.values.push(v);
    return `$${this.values.length}${cast}`;
  }
}

/**
 * The rows every posting of a batch writes, whatever its kind: the posting, its journal queue row,
 * its entries and its event, each as one insert of unnested arrays (CTEs `p`, `jq`, `e`, `o`).
 */
function batchPostingRows(companyId: string, ps: ReadonlyArray<Omit<PostingWrite, 'wallet'>>, $: Params): string[] {
  const col = <T>(rows: readonly T[], f: (r: T) => unknown) => rows.map(f);
  const entries = ps.flatMap((w) => w.entries.map((e, i) => ({ postingId: w.posting.id, seq: i + 1, e })));
  const company = $.add(companyId, '::text');
  if (company !== '$1::text') throw new Error('the company is the first parameter of a batch statement');
  const ids = $.add(
    col(ps, (w) => w.posting.id),
    '::uuid[]',
  );
  return [
    `p as (
      insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail, movement_id, hold_id, reason)
      select t.id, t.key, t.hash, t.kind, ${company}, t.rail, t.movement_id, t.hold_id, t.reason
        from unnest(${ids}, ${$.add(
          col(ps, (w) => w.posting.idempotencyKey),
          '::text[]',
        )}, ${$.add(
          col(ps, (w) => w.posting.requestHash),
          '::text[]',
        )},
                    ${$.add(
                      col(ps, (w) => w.posting.kind),
                      '::text[]',
                    )}, ${$.add(
                      col(ps, (w) => w.posting.rail),
                      '::text[]',
                    )},
                    ${$.add(
                      col(ps, (w) => w.posting.movementId),
                      '::uuid[]',
                    )}, ${$.add(
                      col(ps, (w) => w.posting.holdId),
                      '::uuid[]',
                    )},
                    ${$.add(
                      col(ps, (w) => w.posting.reason ?? null),
                      '::text[]',
                    )})
          as t(id, key, hash, kind, rail, movement_id, hold_id, reason)
      returning 1)`,
    // queued for the journal's sealer (docs/journal.md)
    `jq as (insert into ledger.journal_queue (posting_id) select t.id from unnest(${ids}) as t(id) returning 1)`,
    `e as (
      insert into ledger.entries (posting_id, seq, account, amount)
      select t.posting_id, t.seq, t.account, t.amount
        from unnest(${$.add(
          col(entries, (x) => x.postingId),
          '::uuid[]',
        )}, ${$.add(
          col(entries, (x) => x.seq),
          '::smallint[]',
        )},
                    ${$.add(
                      col(entries, (x) => x.e.account),
                      '::text[]',
                    )}, ${$.add(
                      col(entries, (x) => x.e.amount.toString()),
                      '::bigint[]',
                    )})
          as t(posting_id, seq, account, amount)
      returning 1)`,
    `o as (
      insert into ledger.outbox (id, subject, payload, headers)
      select t.id, t.subject, t.payload::jsonb, t.headers::jsonb
        from unnest(${$.add(
          col(ps, (w) => w.event.id),
          '::uuid[]',
        )}, ${$.add(
          col(ps, (w) => w.event.subject),
          '::text[]',
        )},
                    ${$.add(
                      col(ps, (w) => JSON.stringify(w.event.payload)),
                      '::text[]',
                    )},
                    ${$.add(
                      col(ps, (w) => JSON.stringify(w.event.traceparent ? { traceparent: w.event.traceparent } : {})),
                      '::text[]',
                    )})
          as t(id, subject, payload, headers)
      returning 1)`,
  ];
}

/**
 * Every row of a batch of postings (ReserveBatch) as ONE statement of data-modifying CTEs whose
 * parameters are arrays, one per column, expanded with unnest: a fixed number of bind parameters
 * (Postgres allows 65,535) and one plan whatever the batch's size. The rows are exactly those
 * `postingStatement` writes for each posting (posting + idempotency record, entries, hold, movement,
 * outbox); the wallets are changed by the caller, once each. Unique keys (idempotency key, movement
 * id) make the statement, and so the transaction, fail as a whole on a taken one.
 */
export function batchInsertStatement(b: BatchPostingWrite): { sql: string; params: unknown[] } {
  const ps = b.postings;
  const col = <T>(rows: readonly T[], f: (r: T) => unknown) => rows.map(f);
  const big = (v: bigint) => v.toString();
  const holds = ps.flatMap((w) => (w.newHold ? [w.newHold] : []));
  const movements = ps.flatMap((w) => (w.newMovement ? [w.newMovement] : []));
  if (ps.some((w) => w.closeHold || w.reverseMovement || w.movementUpdate || w.posting.companyId !== b.companyId)) {
    throw new Error('a batch holds only new postings of its one company');
  }
  const $ = new Params();
  const ctes = batchPostingRows(b.companyId, ps, $);
  const company = '$1::text';
  ctes.push(`h as (
      insert into ledger.holds (id, company_id, rail, amount, fee, iva, total, fee_operation, movement_id, fixed_fee)
      select t.id, ${company}, t.rail, t.amount, t.fee, t.iva, t.total, t.fee_operation, t.movement_id, t.fixed_fee
        from unnest(${$.add(
          col(holds, (h) => h.id),
          '::uuid[]',
        )}, ${$.add(
          col(holds, (h) => h.rail),
          '::text[]',
        )},
                    ${$.add(
                      col(holds, (h) => big(h.amount)),
                      '::bigint[]',
                    )}, ${$.add(
                      col(holds, (h) => big(h.fee)),
                      '::bigint[]',
                    )},
                    ${$.add(
                      col(holds, (h) => big(h.iva)),
                      '::bigint[]',
                    )}, ${$.add(
                      col(holds, (h) => big(h.total)),
                      '::bigint[]',
                    )},
                    ${$.add(
                      col(holds, (h) => h.feeOperation),
                      '::text[]',
                    )}, ${$.add(
                      col(holds, (h) => h.movementId),
                      '::uuid[]',
                    )},
                    ${$.add(
                      col(holds, (h) => big(h.fixedFee)),
                      '::bigint[]',
                    )})
          as t(id, rail, amount, fee, iva, total, fee_operation, movement_id, fixed_fee)
      returning 1)`);
  ctes.push(`m as (
      insert into ledger.movements (id, company_id, type, rail, wallet_rail, status, amount, total_fee, iva_amount,
          net_amount, reference, api_key_id, details, completed_at)
      select t.id, ${company}, t.type, t.rail, t.wallet_rail, t.status, t.amount, t.total_fee, t.iva_amount,
             t.net_amount, t.reference, t.api_key_id, t.details::jsonb, case when t.completed then now() end
        from unnest(${$.add(
          col(movements, (m) => m.id),
          '::uuid[]',
        )}, ${$.add(
          col(movements, (m) => m.type),
          '::text[]',
        )},
                    ${$.add(
                      col(movements, (m) => m.rail),
                      '::text[]',
                    )}, ${$.add(
                      col(movements, (m) => m.walletRail),
                      '::text[]',
                    )},
                    ${$.add(
                      col(movements, (m) => m.status),
                      '::text[]',
                    )}, ${$.add(
                      col(movements, (m) => big(m.amount)),
                      '::bigint[]',
                    )},
                    ${$.add(
                      col(movements, (m) => big(m.totalFee)),
                      '::bigint[]',
                    )}, ${$.add(
                      col(movements, (m) => big(m.ivaAmount)),
                      '::bigint[]',
                    )},
                    ${$.add(
                      col(movements, (m) => big(m.netAmount)),
                      '::bigint[]',
                    )}, ${$.add(
                      col(movements, (m) => m.reference),
                      '::text[]',
                    )},
                    ${$.add(
                      col(movements, (m) => m.apiKeyId),
                      '::text[]',
                    )}, ${$.add(
                      col(movements, (m) => JSON.stringify(m.details)),
                      '::text[]',
                    )},
                    ${$.add(
                      col(movements, (m) => m.completed),
                      '::boolean[]',
                    )})
          as t(id, type, rail, wallet_rail, status, amount, total_fee, iva_amount, net_amount, reference, api_key_id, details, completed)
      returning 1)`);
  const sql = `with ${ctes.join(',\n    ')}
    select (select count(*) from p)::int as postings, (select count(*) from e)::int as entries,
           (select count(*) from h)::int as holds, (select count(*) from m)::int as movements, (select count(*) from o)::int as events`;
  return { sql, params: $.values };
}

/**
 * The rows of many commits of one company's holds (CommitBatch), the holds already closed by the
 * caller in the same transaction (only those are passed): per posting the rows `postingStatement`
 * writes for a commit (posting, journal queue, entries, event) and its movement COMPLETED, in ONE
 * statement of unnested arrays. Answers each movement's completion instant.
 */
export function batchCommitStatement(companyId: string, ps: ReadonlyArray<Omit<PostingWrite, 'wallet'>>): { sql: string; params: unknown[] } {
  if (ps.some((w) => !w.closeHold || w.movementUpdate?.status !== 'COMPLETED' || w.newHold || w.newMovement || w.posting.companyId !== companyId)) {
    throw new Error('a commit batch holds only hold closes of its one company');
  }
  const $ = new Params();
  const ctes = batchPostingRows(companyId, ps, $);
  ctes.push(`m as (
      update ledger.movements set status = 'COMPLETED', updated_at = now(), completed_at = now()
       where id = any(${$.add(
         ps.map((w) => w.movementUpdate!.id),
         '::uuid[]',
       )}) and company_id = $1::text
      returning id::text as id, ${isoUs('completed_at')} as completed_at)`);
  const sql = `with ${ctes.join(',\n    ')}
    select (select count(*) from p)::int as postings, (select json_agg(json_build_object('id', m.id, 'completedAt', m.completed_at)) from m) as movements`;
  return { sql, params: $.values };
}
