import { randomUUID } from 'node:crypto';
import type { Database, Logger, Tx, Watch } from '@wallet/platform';
import { FAULT_NAMES, allUp, type FaultName, type FaultState, type Faults } from '../domain/faults.js';
import type { FinalStatus, Rail, TransferStatus } from '../domain/rails.js';
import type { CallbackBodyFactory, FaultSwitches, NewTransfer, TransferBook, TransferRow } from '../app/ports.js';

/** Every SQL statement of the sandbox's rails and switches; times come from the database clock so instances agree. */

export interface CallbackRow {
  eventId: string;
  transactionId: string;
  callbackUrl: string;
  body: string;
  state: 'pending' | 'sending' | 'delivered' | 'abandoned';
  attempts: number;
}

interface RawTransfer {
  provider_transfer_id: string;
  transaction_id: string;
  rail: Rail;
  amount_cents: string;
  status: TransferStatus;
  error_message: string | null;
  callback_url: string;
  request: Record<string, unknown> | string;
  outcome_at: string | null;
}
interface RawCallback {
  event_id: string;
  transaction_id: string;
  callback_url: string;
  body: string;
  state: CallbackRow['state'];
  attempts: number;
}

const TRANSFER_COLS = `provider_transfer_id, transaction_id, rail, amount_cents::text as amount_cents, status, error_message,
  callback_url, request, to_char(outcome_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as outcome_at`;
/** TRANSFER_COLS qualified with the alias `t` (for statements that join other relations). */
const TRANSFER_COLS_T = `t.provider_transfer_id, t.transaction_id, t.rail, t.amount_cents::text as amount_cents, t.status, t.error_message,
  t.callback_url, t.request, to_char(t.outcome_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as outcome_at`;
const CALLBACK_COLS = 'event_id::text as event_id, transaction_id, callback_url, body, state, attempts';

function toTransfer(r: RawTransfer): TransferRow {
  return {
    providerTransferId: r.provider_transfer_id,
    transactionId: r.transaction_id,
    rail: r.rail,
    amountCents: BigInt(r.amount_cents),
    status: r.status,
    errorMessage: r.error_message,
    callbackUrl: r.callback_url,
    request: typeof r.request === 'string' ? (JSON.parse(r.request) as Record<string, unknown>) : r.request,
    outcomeAt: r.outcome_at,
  };
}
function toCallback(r: RawCallback): CallbackRow {
  return { eventId: r.event_id, transactionId: r.transaction_id, callbackUrl: r.callback_url, body: r.body, state: r.state, attempts: Number(r.attempts) };
}

/** A delivered callback to record: the attempt (its claim) that got the 2xx, and the status. */
export interface DeliveredMark {
  eventId: string;
  attempts: number;
  status: number;
}

export class SandboxStore implements TransferBook, FaultSwitches {
  /** The fault switches' copy (see `fault`), its feed while it is up, and its reconnect timer. */
  private readonly switches = new Map<FaultName, { state: FaultState; version: bigint }>();
  private feed: Watch | undefined;

  constructor(private readonly db: Database) {}

  ping(): Promise<void> {
    return this.db.ping();
  }

  // ---- Transfers ---------------------------------------------------------------------------

  /** Inserts the transfer unless its transactionId is known; returns the stored row and whether it is new. */
  async insertTransfer(t: NewTransfer): Promise<{ transfer: TransferRow; created: boolean }> {
    const inserted = await this.db.prepared<RawTransfer>(
      `insert into sandbox.transfers (provider_transfer_id, transaction_id, rail, amount_cents, callback_url, request, outcome_due_at)
       values (?, ?, ?, ?::bigint, ?, ?::jsonb, clock_timestamp() + ?::int * interval '1 millisecond')
       on conflict (transaction_id) do nothing
       returning ${TRANSFER_COLS}`,
      [t.providerTransferId, t.transactionId, t.rail, t.amountCents.toString(), t.callbackUrl, JSON.stringify(t.request), t.confirmMs],
    );
    if (inserted[0]) return { transfer: toTransfer(inserted[0]), created: true };
    const existing = await this.findTransfer(t.transactionId);
    if (!existing) throw new Error(`transfer ${t.transactionId} vanished after a conflicting insert`);
    return { transfer: existing, created: false };
  }

  /**
   * `insertTransfer` for many at once (a bulk submission): one insert of every new transfer (unnest,
   * the ones whose transactionId is known skipped), then one read of those; in the given order.
   */
  async insertTransfers(ts: NewTransfer[]): Promise<Array<{ transfer: TransferRow; created: boolean }>> {
    if (ts.length === 0) return [];
    const inserted = await this.db.prepared<RawTransfer>(
      `insert into sandbox.transfers (provider_transfer_id, transaction_id, rail, amount_cents, callback_url, request, outcome_due_at)
       select x.p, x.t, x.r, x.a::bigint, x.u, x.q::jsonb, clock_timestamp() + x.ms * interval '1 millisecond'
         from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[]) as x(p, t, r, a, u, q, ms)
       on conflict (transaction_id) do nothing
       returning ${TRANSFER_COLS}`,
      [
        ts.map((t) => t.providerTransferId),
        ts.map((t) => t.transactionId),
        ts.map((t) => t.rail),
        ts.map((t) => t.amountCents.toString()),
        ts.map((t) => t.callbackUrl),
        ts.map((t) => JSON.stringify(t.request)),
        ts.map((t) => t.confirmMs),
      ],
    );
    const created = new Map(inserted.map((r) => [r.transaction_id, toTransfer(r)]));
    const known = ts.filter((t) => !created.has(t.transactionId)).map((t) => t.transactionId);
    const existing = new Map<string, TransferRow>();
    if (known.length > 0) {
      const rows = await this.db.prepared<RawTransfer>(`select ${TRANSFER_COLS} from sandbox.transfers where transaction_id = any(?::text[])`, [known]);
      for (const r of rows) existing.set(r.transaction_id, toTransfer(r));
    }
    return ts.map((t) => {
      const mine = created.get(t.transactionId);
      if (mine) return { transfer: mine, created: true };
      const other = existing.get(t.transactionId);
      if (!other) throw new Error(`transfer ${t.transactionId} vanished after a conflicting insert`);
      return { transfer: other, created: false };
    });
  }

  async findTransfer(transactionId: string): Promise<TransferRow | undefined> {
    const [r] = await this.db.prepared<RawTransfer>(`select ${TRANSFER_COLS} from sandbox.transfers where transaction_id = ?`, [transactionId]);
    return r ? toTransfer(r) : undefined;
  }

  /** Locks a transfer for a forced outcome. */
  async lockTransfer(tx: Tx, transactionId: string): Promise<TransferRow | undefined> {
    const r = await tx.one<RawTransfer>(`select ${TRANSFER_COLS} from sandbox.transfers where transaction_id = ? for update`, [transactionId]);
    return r ? toTransfer(r) : undefined;
  }

  /** Pending transfers whose outcome is due, locked; other instances skip them. */
  async lockDueTransfers(tx: Tx, limit: number): Promise<TransferRow[]> {
    const rows = await tx.query<RawTransfer>(
      `select ${TRANSFER_COLS} from sandbox.transfers
        where status = 'PENDING' and outcome_due_at <= clock_timestamp()
        order by outcome_due_at limit ? for update skip locked`,
      [limit],
    );
    return rows.map(toTransfer);
  }

  /**
   * Records the outcome of a locked pending transfer and schedules its callback (due now), in
   * the caller's transaction; returns the settled transfer.
   */
  async settle(
    tx: Tx,
    transactionId: string,
    outcome: { status: FinalStatus; errorMessage: string | null; forced: boolean },
    body: CallbackBodyFactory,
    deliveryWindowMs: number,
  ): Promise<TransferRow> {
    const r = await tx.one<RawTransfer>(
      `update sandbox.transfers set status = ?, error_message = ?, forced = ?, outcome_at = clock_timestamp()
        where transaction_id = ? and status = 'PENDING' returning ${TRANSFER_COLS}`,
      [outcome.status, outcome.errorMessage, outcome.forced, transactionId],
    );
    if (!r) throw new Error(`transfer ${transactionId} is not pending`);
    const settled = toTransfer(r);
    const eventId = randomUUID();
    await tx.query(
      `insert into sandbox.callbacks (event_id, transaction_id, callback_url, body, expires_at)
       values (?::uuid, ?, ?, ?, clock_timestamp() + ?::bigint * interval '1 millisecond')`,
      [eventId, settled.transactionId, settled.callbackUrl, body(settled, eventId), deliveryWindowMs],
    );
    return settled;
  }

  /**
   * `settle` for many locked pending transfers at once (the scheduler's batch): one statement
   * records the outcomes, one writes their callbacks, in the caller's transaction.
   */
  async settleMany(
    tx: Tx,
    outcomes: Array<{ transactionId: string; status: FinalStatus; errorMessage: string | null }>,
    body: CallbackBodyFactory,
    deliveryWindowMs: number,
  ): Promise<TransferRow[]> {
    if (outcomes.length === 0) return [];
    const rows = await tx.query<RawTransfer>(
      `update sandbox.transfers t set status = o.status, error_message = nullif(o.error_message, ''), forced = false, outcome_at = clock_timestamp()
         from unnest(array[?]::text[], array[?]::text[], array[?]::text[]) as o(transaction_id, status, error_message)
        where t.transaction_id = o.transaction_id and t.status = 'PENDING'
       returning ${TRANSFER_COLS_T}`,
      [outcomes.map((o) => o.transactionId), outcomes.map((o) => o.status), outcomes.map((o) => o.errorMessage ?? '')],
    ); // '' for none: null does not survive the inlined array
    if (rows.length !== outcomes.length) throw new Error('some due transfers were no longer pending');
    const settled = rows.map(toTransfer);
    const ids = settled.map(() => randomUUID());
    await tx.query(
      `insert into sandbox.callbacks (event_id, transaction_id, callback_url, body, expires_at)
       select e, tr, u, b, clock_timestamp() + ?::bigint * interval '1 millisecond'
         from unnest(array[?]::uuid[], array[?]::text[], array[?]::text[], array[?]::text[]) as c(e, tr, u, b)`,
      [deliveryWindowMs, ids, settled.map((t) => t.transactionId), settled.map((t) => t.callbackUrl), settled.map((t, i) => body(t, ids[i]!))],
    );
    return settled;
  }

  // ---- Callbacks ---------------------------------------------------------------------------

  /**
   * Claims due deliveries (pending and due, or `sending` whose lease ran out): marks them
   * `sending` for `leaseMs`, counts the attempt, and returns them. One statement, atomic on its
   * own: no explicit transaction (its begin and commit were two more round trips per claim).
   */
  async claimDueCallbacks(limit: number, leaseMs: number): Promise<CallbackRow[]> {
    const rows = await this.db.prepared<RawCallback>(
      `update sandbox.callbacks c
          set state = 'sending', attempts = c.attempts + 1, last_attempt_at = clock_timestamp(),
              next_attempt_at = clock_timestamp() + ?::int * interval '1 millisecond'
        where c.event_id in (
          select event_id from sandbox.callbacks
           where state in ('pending', 'sending') and next_attempt_at <= clock_timestamp()
           order by next_attempt_at limit ? for update skip locked)
      returning ${CALLBACK_COLS.split(', ')
        .map((c) => `c.${c}`)
        .join(', ')}`,
      [leaseMs, limit],
    );
    return rows.map(toCallback);
  }

  /**
   * `claimDueCallbacks` for one callback URL's rail transfer outcomes only (the bulk sender fills a
   * request with them, delivery/callback-dispatcher.ts): a rail transfer's outcome is the callback of
   * a transfer (same transaction id and URL); prenotes', PSE links' and inbound payments' callbacks
   * have no transfer row. The caller still checks each body (`isTransferOutcomeBody`).
   */
  async claimDueTransferOutcomes(callbackUrl: string, limit: number, leaseMs: number): Promise<CallbackRow[]> {
    const rows = await this.db.prepared<RawCallback>(
      `update sandbox.callbacks c
          set state = 'sending', attempts = c.attempts + 1, last_attempt_at = clock_timestamp(),
              next_attempt_at = clock_timestamp() + ?::int * interval '1 millisecond'
        where c.event_id in (
          select d.event_id from sandbox.callbacks d
           where d.state in ('pending', 'sending') and d.next_attempt_at <= clock_timestamp() and d.callback_url = ?
             and exists (select 1 from sandbox.transfers t where t.transaction_id = d.transaction_id and t.callback_url = d.callback_url)
           order by d.next_attempt_at limit ? for update of d skip locked)
      returning ${CALLBACK_COLS.split(', ')
        .map((c) => `c.${c}`)
        .join(', ')}`,
      [leaseMs, callbackUrl, limit],
    );
    return rows.map(toCallback);
  }

  /**
   * Redelivery: the transaction's last callback (highest `seq`) is due again now with a fresh 24 h window. With `claimMs`
   * it is claimed at once (returned `sending`) so the caller sends it itself. Undefined when the
   * transaction has no callback; a delivery in flight is left alone and returned as it is.
   */
  async requeueCallback(
    transactionId: string,
    deliveryWindowMs: number,
    claimMs: number | null,
  ): Promise<{ callback: CallbackRow; requeued: boolean } | undefined> {
    return this.db.tx(async (tx) => {
      const current = await tx.one<RawCallback & { leased: boolean }>(
        `select ${CALLBACK_COLS}, (state = 'sending' and next_attempt_at > clock_timestamp()) as leased
           from sandbox.callbacks where transaction_id = ? order by seq desc limit 1 for update`,
        [transactionId],
      );
      if (!current) return undefined;
      if (current.leased) return { callback: toCallback(current), requeued: false };
      const r =
        claimMs === null
          ? await tx.one<RawCallback>(
              `update sandbox.callbacks set state = 'pending', next_attempt_at = clock_timestamp(),
                  expires_at = clock_timestamp() + ?::bigint * interval '1 millisecond'
            where event_id = ?::uuid returning ${CALLBACK_COLS}`,
              [deliveryWindowMs, current.event_id],
            )
          : await tx.one<RawCallback>(
              `update sandbox.callbacks set state = 'sending', attempts = attempts + 1, last_attempt_at = clock_timestamp(),
                  next_attempt_at = clock_timestamp() + ?::int * interval '1 millisecond',
                  expires_at = clock_timestamp() + ?::bigint * interval '1 millisecond'
            where event_id = ?::uuid returning ${CALLBACK_COLS}`,
              [claimMs, deliveryWindowMs, current.event_id],
            );
      return r ? { callback: toCallback(r), requeued: true } : undefined;
    });
  }

  /**
   * 2xx answers: delivered, several in one statement (see delivery/delivered-marks.ts). Each is
   * ignored if another sender took the lease over meanwhile (its claim counted another attempt).
   * `$n` placeholders: the arrays go as array parameters.
   */
  async markDelivered(marks: readonly DeliveredMark[]): Promise<void> {
    if (marks.length === 0) return;
    await this.db.prepared(
      `update sandbox.callbacks c set state = 'delivered', delivered_at = clock_timestamp(), last_status = m.status, last_error = null
         from unnest($1::uuid[], $2::int[], $3::int[]) as m(event_id, attempts, status)
        where c.event_id = m.event_id and c.state = 'sending' and c.attempts = m.attempts`,
      [marks.map((m) => m.eventId), marks.map((m) => m.attempts), marks.map((m) => m.status)],
    );
  }

  /** A failed attempt: retried after `retryMs`, or abandoned once past the delivery window. */
  async markFailed(c: CallbackRow, status: number | null, error: string, retryMs: number): Promise<void> {
    await this.db.query(
      `update sandbox.callbacks
          set state = case when clock_timestamp() + ?::int * interval '1 millisecond' > expires_at then 'abandoned' else 'pending' end,
              next_attempt_at = clock_timestamp() + ?::int * interval '1 millisecond', last_status = ?, last_error = ?
        where event_id = ?::uuid and state = 'sending' and attempts = ?`,
      [retryMs, retryMs, status, error.slice(0, 500), c.eventId, c.attempts],
    );
  }

  /**
   * `markFailed` for the outcomes of one failed bulk request, in one statement: each retried after
   * its own `retryMs` (its own attempts count), or abandoned once past its delivery window.
   */
  async markFailedMany(fails: ReadonlyArray<{ eventId: string; attempts: number; retryMs: number }>, status: number | null, error: string): Promise<void> {
    if (fails.length === 0) return;
    await this.db.prepared(
      `update sandbox.callbacks c
          set state = case when clock_timestamp() + m.retry_ms * interval '1 millisecond' > c.expires_at then 'abandoned' else 'pending' end,
              next_attempt_at = clock_timestamp() + m.retry_ms * interval '1 millisecond', last_status = $1::int, last_error = $2::text
         from unnest($3::uuid[], $4::int[], $5::int[]) as m(event_id, attempts, retry_ms)
        where c.event_id = m.event_id and c.state = 'sending' and c.attempts = m.attempts`,
      [status, error.slice(0, 500), fails.map((f) => f.eventId), fails.map((f) => f.attempts), fails.map((f) => f.retryMs)],
    );
  }

  /**
   * Gives claimed deliveries back, due now (a receiver refused the bulk form: they go again one by
   * one). Each only if this claim still holds it (`sending`, same attempts count).
   */
  async releaseCallbacks(claims: ReadonlyArray<Pick<CallbackRow, 'eventId' | 'attempts'>>, status: number | null, error: string): Promise<void> {
    if (claims.length === 0) return;
    await this.db.prepared(
      `update sandbox.callbacks c set state = 'pending', next_attempt_at = clock_timestamp(), last_status = $1::int, last_error = $2::text
         from unnest($3::uuid[], $4::int[]) as m(event_id, attempts)
        where c.event_id = m.event_id and c.state = 'sending' and c.attempts = m.attempts`,
      [status, error.slice(0, 500), claims.map((c) => c.eventId), claims.map((c) => c.attempts)],
    );
  }

  /** Delivery state of a transaction's last callback (tests and the redeliver answer). */
  async findCallback(transactionId: string): Promise<(CallbackRow & { deliveredAt: string | null; lastStatus: number | null }) | undefined> {
    const [r] = await this.db.query<RawCallback & { delivered_at: string | null; last_status: number | null }>(
      `select ${CALLBACK_COLS}, delivered_at, last_status from sandbox.callbacks where transaction_id = ? order by seq desc limit 1`,
      [transactionId],
    );
    return r ? { ...toCallback(r), deliveredAt: r.delivered_at, lastStatus: r.last_status === null ? null : Number(r.last_status) } : undefined;
  }

  // ---- Faults ------------------------------------------------------------------------------

  async faults(): Promise<Faults> {
    const rows = await this.db.query<{ name: FaultName; state: FaultState }>('select name, state from sandbox.faults');
    const out = allUp();
    for (const r of rows) if ((FAULT_NAMES as readonly string[]).includes(r.name)) out[r.name] = r.state;
    return out;
  }

  /**
   * One switch. While the change feed is up (`watchFaults`), from memory: the copy is loaded after
   * the LISTEN is in place and moved by each change's NOTIFY, and only ever forward (each change has a
   * version from one sequence), so a reload that read before a change cannot put the old value back.
   * On this instance a change applies to the very next call (`setFaults` applies its own change before
   * answering); on another, as soon as the NOTIFY arrives. While the feed is down (the listening
   * connection was lost, until it is back), every call reads the database as before.
   */
  async fault(name: FaultName): Promise<FaultState> {
    if (this.feed?.up) return this.switches.get(name)?.state ?? 'up';
    const [r] = await this.db.prepared<{ state: FaultState }>('select state from sandbox.faults where name = ?', [name]);
    return r?.state ?? 'up';
  }

  async setFaults(changes: Partial<Faults>): Promise<Faults> {
    const entries = Object.entries(changes).filter(([, v]) => v !== undefined) as Array<[FaultName, FaultState]>;
    if (entries.length > 0) {
      const rows = await this.db.preparedTx(async (tx) => {
        const changed = await tx.query<SwitchRow>(
          `insert into sandbox.faults (name, state) select * from unnest($1::text[], $2::text[])
           on conflict (name) do update set state = excluded.state, updated_at = now(), version = nextval('sandbox.faults_version')
           returning name, state, version::text as version`,
          [entries.map(([n]) => n), entries.map(([, v]) => v)],
        );
        await tx.query(`select pg_notify('${FAULTS_CHANNEL}', $1)`, [JSON.stringify(changed)]);
        return changed;
      });
      this.applySwitches(rows);
    }
    return this.faults();
  }

  /** Starts the change feed of the switches (then they are read from memory); it reconnects by itself. */
  async watchFaults(log: Pick<Logger, 'warn'>): Promise<void> {
    this.feed = await this.db.watch(FAULTS_CHANNEL, {
      onMessage: (payload) => this.applySwitches(JSON.parse(payload) as SwitchRow[]),
      // Loaded once the LISTEN is in place: a change committed after this read is notified.
      onUp: async () => this.applySwitches(await this.db.prepared<SwitchRow>('select name, state, version::text as version from sandbox.faults')),
      onDown: (err) => log.warn({ err: err.message }, 'fault switch feed down; reading the database until it is back'),
    });
  }

  stopWatchingFaults(): void {
    this.feed?.stop();
  }

  private applySwitches(rows: SwitchRow[]): void {
    for (const r of rows) {
      if (!(FAULT_NAMES as readonly string[]).includes(r.name)) continue;
      const version = BigInt(r.version);
      const cur = this.switches.get(r.name);
      if (!cur || cur.version < version) this.switches.set(r.name, { state: r.state, version });
    }
  }
}

const FAULTS_CHANNEL = 'sandbox_faults';
interface SwitchRow {
  name: FaultName;
  state: FaultState;
  version: string;
}
