import type { EventHandler, Logger, SqlTx } from '@wallet/platform';
import {
  depositPatch, depositStatusRank, merge, transferPatch, transferStatusRank,
  type Decoded, type Patch, type RecordMeta,
} from '../domain/records.js';
import { DEPOSITS, TRANSACTIONS, insertRecord, lockRecord, updateRecord } from '../persistence/read-model.store.js';

/** Durable consumers: one per stream (NATS 2.9 takes a single filter subject). */
export const TRANSFERS_CONSUMER = 'receipt-transfers';
export const DEPOSITS_CONSUMER = 'receipt-deposits';
export const CONSUMERS = [
  { stream: 'TRANSFERS' as const, durable: TRANSFERS_CONSUMER, subject: 'transfer.>' },
  { stream: 'DEPOSITS' as const, durable: DEPOSITS_CONSUMER, subject: 'deposit.>' },
];

type Def = typeof TRANSACTIONS | typeof DEPOSITS;

/**
 * Applies one event to its read-model row inside the InboxConsumer's transaction (inbox row +
 * merge commit together): lock the row, merge (out-of-order safe), write only if something moved.
 * A row of another company under the same id is never touched (logged). Undecodable payloads are
 * acknowledged and dropped (logged); a database failure throws so the event is redelivered.
 */
async function apply<F extends object>(
  tx: SqlTx, def: Def, decoded: Decoded<F>, rank: (s: string | null | undefined) => number, log: Logger, ctx: { eventId: string; subject: string },
): Promise<void> {
  if (!decoded.ok) {
    log.warn({ ...ctx, reason: decoded.reason }, 'event not applied to the receipt read model');
    return;
  }
  const p: Patch<F> = decoded.patch;
  const fields = def.fields as unknown as ReadonlyArray<keyof F>;
  const tdef = def as unknown as Parameters<typeof lockRecord<F>>[1];
  let stored = await lockRecord<F>(tx, tdef, p.id);
  if (!stored) {
    const first = merge<F>(undefined, p, fields, rank);
    if (await insertRecord<F>(tx, tdef, first.record)) {
      log.debug({ ...ctx, id: p.id, status: first.record.status }, 'receipt record created');
      return;
    }
    stored = await lockRecord<F>(tx, tdef, p.id);
    if (!stored) throw new Error(`receipt record ${p.id} vanished during insert`);
  }
  if (stored.companyId !== p.companyId) {
    log.error({ ...ctx, id: p.id, companyId: p.companyId }, 'event id clashes with another company\'s record; ignored');
    return;
  }
  const { record, changed } = merge<F>(stored as RecordMeta & F, p, fields, rank);
  if (changed) await updateRecord<F>(tx, tdef, record);
  log.debug({ ...ctx, id: p.id, status: record.status, changed }, 'receipt record merged');
}

export function transferHandler(log: Logger): EventHandler {
  return (evt, tx) => apply(tx, TRANSACTIONS, transferPatch(evt.payload, evt.id, evt.time), transferStatusRank, log, { eventId: evt.id, subject: evt.subject });
}

export function depositHandler(log: Logger): EventHandler {
  return (evt, tx) => apply(tx, DEPOSITS, depositPatch(evt.payload, evt.id, evt.time), depositStatusRank, log, { eventId: evt.id, subject: evt.subject });
}
