import type { BatchEventHandler, EventHandler, Logger, SqlTx } from '@wallet/platform';
import {
  DEPOSIT_FIELDS,
  TRANSACTION_FIELDS,
  depositPatch,
  depositStatusRank,
  merge,
  returnPatch,
  transferPatch,
  transferStatusRank,
  type Decoded,
  type DepositFields,
  type Patch,
  type RecordMeta,
  type TransactionFields,
} from '../domain/records.js';
import type { RecordTable } from './ports.js';

/** Durable consumers: one per stream (NATS 2.9 takes a single filter subject). */
export const TRANSFERS_CONSUMER = 'receipt-transfers';
export const DEPOSITS_CONSUMER = 'receipt-deposits';
export const CONSUMERS = [
  { stream: 'TRANSFERS' as const, durable: TRANSFERS_CONSUMER, subject: 'transfer.>' },
  { stream: 'DEPOSITS' as const, durable: DEPOSITS_CONSUMER, subject: 'deposit.>' },
];

/**
 * Applies a page of events (in stream order; one event is a page of one) to their read-model rows
 * inside the InboxConsumer's transaction (inbox rows + merge commit together): the page's rows locked
 * with one statement (in id order, so two replicas never wait on each other in a cycle), each event
 * merged in order in memory (out-of-order safe), then the new rows inserted and the moved ones
 * updated with one multi-row statement each: the same rows as applying the events one by one. A row
 * of another company under the same id is never touched (logged). Undecodable payloads are
 * acknowledged and dropped (logged). A row another replica inserted first, or a database failure,
 * throws: the page rolls back and its events are applied one at a time, or redelivered.
 */
async function applyPage<F extends object>(
  tx: SqlTx,
  table: RecordTable<F>,
  fields: ReadonlyArray<keyof F>,
  events: ReadonlyArray<{ decoded: Decoded<F>; ctx: { eventId: string; subject: string } }>,
  rank: (s: string | null | undefined) => number,
  log: Logger,
): Promise<void> {
  const patches: Array<{ p: Patch<F>; ctx: { eventId: string; subject: string } }> = [];
  for (const { decoded, ctx } of events) {
    if (decoded.ok) patches.push({ p: decoded.patch, ctx });
    else log.warn({ ...ctx, reason: decoded.reason }, 'event not applied to the receipt read model');
  }
  if (patches.length === 0) return;
  const rows = new Map<string, { record: RecordMeta & F; stored: boolean; changed: boolean }>();
  for (const r of await table.lock(tx, [...new Set(patches.map((x) => x.p.id))])) rows.set(r.id, { record: r, stored: true, changed: false });
  for (const { p, ctx } of patches) {
    const row = rows.get(p.id);
    if (row && row.record.companyId !== p.companyId) {
      log.error({ ...ctx, id: p.id, companyId: p.companyId }, "event id clashes with another company's record; ignored");
      continue;
    }
    const { record, changed } = merge<F>(row?.record, p, fields, rank);
    if (!row) rows.set(p.id, { record, stored: false, changed: true });
    else if (changed) Object.assign(row, { record, changed: true });
    log.debug({ ...ctx, id: p.id, status: record.status, changed, created: !row }, 'receipt record merged');
  }
  const fresh = [...rows.values()].filter((r) => !r.stored).map((r) => r.record);
  const moved = [...rows.values()].filter((r) => r.stored && r.changed).map((r) => r.record);
  if (fresh.length > 0 && (await table.insert(tx, fresh)) < fresh.length) {
    throw new Error('a receipt record was created by another writer meanwhile; the page is applied again event by event');
  }
  if (moved.length > 0) await table.update(tx, moved);
}

export function transferHandler(table: RecordTable<TransactionFields>, log: Logger): EventHandler {
  return (evt, tx) => transferPageHandler(table, log)([evt], tx);
}

export function depositHandler(tables: DepositStreamTables, log: Logger): EventHandler {
  return (evt, tx) => depositPageHandler(tables, log)([evt], tx);
}

export function transferPageHandler(table: RecordTable<TransactionFields>, log: Logger): BatchEventHandler {
  return (evts, tx) =>
    applyPage(
      tx,
      table,
      TRANSACTION_FIELDS,
      evts.map((evt) => ({
        decoded: transferPatch(evt.payload, evt.id, evt.time),
        ctx: { eventId: evt.id, subject: evt.subject },
      })),
      transferStatusRank,
      log,
    );
}

/** Returns of a deposit (`deposit.returned`, `deposit.return_failed`, docs/returns.md) carry the return, not the deposit: its wallet movement's receipt. */
const isReturnEvent = (subject: string) => subject === 'deposit.returned' || subject === 'deposit.return_failed';

/** The DEPOSITS stream feeds two tables: a deposit's changes, and the movements of its returns (transactions of kind RETURN). */
export interface DepositStreamTables {
  deposits: RecordTable<DepositFields>;
  transactions: RecordTable<TransactionFields>;
}

export function depositPageHandler(tables: DepositStreamTables, log: Logger): BatchEventHandler {
  return async (evts, tx) => {
    const returns = evts.filter((evt) => isReturnEvent(evt.subject));
    const deposits = evts.filter((evt) => !isReturnEvent(evt.subject));
    const ctx = (evt: (typeof evts)[number]) => ({ eventId: evt.id, subject: evt.subject });
    await applyPage(
      tx,
      tables.deposits,
      DEPOSIT_FIELDS,
      deposits.map((evt) => ({ decoded: depositPatch(evt.payload, evt.id, evt.time), ctx: ctx(evt) })),
      depositStatusRank,
      log,
    );
    await applyPage(
      tx,
      tables.transactions,
      TRANSACTION_FIELDS,
      returns.map((evt) => ({ decoded: returnPatch(evt.payload, evt.id, evt.time), ctx: ctx(evt) })),
      transferStatusRank,
      log,
    );
  };
}
