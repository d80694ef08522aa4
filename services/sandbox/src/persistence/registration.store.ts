import { randomUUID } from 'node:crypto';
import { TableCopy, type Database, type Logger, type Tx } from '@wallet/platform';
import type { KeyType } from '../domain/keys.js';
import type { IncomingRow, KeyRegistry, NewIncoming, NewRegistration, RegistrationRow, ReturnRow } from '../app/ports.js';

/** SQL of participants' Bre-B key registrations and the inbound payments routed to them (database clock). */

interface RawRegistration {
  id: string;
  key_value: string;
  key_type: KeyType;
  holder_name: string;
  holder_document: string | null;
  participant_callback_url: string;
  anchor_handle: string;
  registered_at: string;
  deleted_at: string | null;
}
interface RawIncoming {
  provider_transfer_id: string;
  registration_id: string;
  key_value: string;
  amount_cents: string;
  payer_name: string;
  payer_document: string;
  payer_bank: string;
  received_at: string;
  transaction_id: string | null;
}

const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${col}`;
const REG_COLS = `id::text as id, key_value, key_type, holder_name, holder_document, participant_callback_url, anchor_handle,
  ${iso('registered_at')}, ${iso('deleted_at')}`;
const IN_COLS = `provider_transfer_id, registration_id::text as registration_id, key_value, amount_cents::text as amount_cents,
  payer_name, payer_document, payer_bank, ${iso('received_at')}, transaction_id`;

interface RawReturn {
  return_id: string;
  provider_transfer_id: string;
  amount_cents: string;
  returned_at: string;
}
const RET_COLS = `return_id, provider_transfer_id, amount_cents::text as amount_cents, ${iso('returned_at')}`;
const toReturn = (r: RawReturn): ReturnRow => ({
  returnId: r.return_id,
  providerTransferId: r.provider_transfer_id,
  amountCents: BigInt(r.amount_cents),
  returnedAt: r.returned_at,
});

function toRegistration(r: RawRegistration): RegistrationRow {
  return {
    id: r.id,
    keyValue: r.key_value,
    keyType: r.key_type,
    holderName: r.holder_name,
    holderDocument: r.holder_document,
    participantCallbackUrl: r.participant_callback_url,
    anchorHandle: r.anchor_handle,
    registeredAt: r.registered_at,
    deletedAt: r.deleted_at,
  };
}
function toIncoming(r: RawIncoming): IncomingRow {
  return {
    providerTransferId: r.provider_transfer_id,
    registrationId: r.registration_id,
    keyValue: r.key_value,
    amountCents: BigInt(r.amount_cents),
    payerName: r.payer_name,
    payerDocument: r.payer_document,
    payerBank: r.payer_bank,
    receivedAt: r.received_at,
    transactionId: r.transaction_id,
  };
}

/** Live registrations kept in memory at most (more: every lookup reads the table). */
export const REGISTRATIONS_MEMORY_MAX = 100_000;

export class RegistrationStore implements KeyRegistry {
  /** The live registrations by key value, kept current by their change feed (`watch`). */
  private readonly live: TableCopy<Map<string, RegistrationRow>>;

  constructor(private readonly db: Database) {
    this.live = new TableCopy(db, 'sandbox_registrations', async () => {
      const rows = await this.db.prepared<RawRegistration>(
        `select ${REG_COLS} from sandbox.breb_registrations where deleted_at is null limit ${REGISTRATIONS_MEMORY_MAX + 1}`,
      );
      return rows.length > REGISTRATIONS_MEMORY_MAX ? undefined : new Map(rows.map((r) => [r.key_value, toRegistration(r)]));
    });
  }

  /** Starts the registrations' change feed (LISTEN sandbox_registrations): lookups read memory while it is up. */
  async watch(log: Pick<Logger, 'warn'>): Promise<void> {
    await this.live.start(log, 'key registration');
  }

  stopWatching(): void {
    this.live.stop();
  }

  /**
   * Inserts a live registration unless the value already has one (the partial unique index
   * decides between racing inserts); returns the live registration and whether it is new.
   */
  async insertRegistration(r: NewRegistration): Promise<{ registration: RegistrationRow; created: boolean }> {
    for (let i = 0; i < 3; i += 1) {
      const [inserted] = await this.db.query<RawRegistration>(
        `insert into sandbox.breb_registrations (key_value, key_type, holder_name, holder_document, participant_callback_url, anchor_handle)
         values (?, ?, ?, ?, ?, ?)
         on conflict (key_value) where deleted_at is null do nothing
         returning ${REG_COLS}`,
        [r.keyValue, r.keyType, r.holderName, r.holderDocument, r.participantCallbackUrl, r.anchorHandle],
      );
      if (inserted) {
        this.live.wrote();
        return { registration: toRegistration(inserted), created: true };
      }
      const live = await this.findLiveInTable(r.keyValue);
      if (live) return { registration: live, created: false };
      // The live one was deleted between the two statements: try again.
    }
    // Never the key value in the message: errors reach logs, key values are personal data.
    throw new Error(`could not register the key (anchor ${r.anchorHandle}): the live registration keeps changing`);
  }

  /**
   * The value's live registration (every directory lookup asks): from memory while the change feed
   * is up, else a prepared statement.
   */
  async findLive(keyValue: string): Promise<RegistrationRow | undefined> {
    const live = this.live.current;
    if (live) return live.get(keyValue);
    return this.findLiveInTable(keyValue);
  }

  private async findLiveInTable(keyValue: string): Promise<RegistrationRow | undefined> {
    const [r] = await this.db.prepared<RawRegistration>(`select ${REG_COLS} from sandbox.breb_registrations where key_value = ? and deleted_at is null`, [
      keyValue,
    ]);
    return r ? toRegistration(r) : undefined;
  }

  /** The most recent registration of the value, live or deleted (where the network routes payments). */
  async findLatest(tx: Tx, keyValue: string): Promise<RegistrationRow | undefined> {
    const r = await tx.one<RawRegistration>(
      `select ${REG_COLS} from sandbox.breb_registrations where key_value = ?
        order by (deleted_at is null) desc, registered_at desc, id desc limit 1`,
      [keyValue],
    );
    return r ? toRegistration(r) : undefined;
  }

  /** Live registrations' anchor handles of these values, in the caller's transaction (rail settlement). */
  async liveAnchors(tx: Tx, keyValues: string[]): Promise<Map<string, string>> {
    if (keyValues.length === 0) return new Map();
    const rows = await tx.query<{ key_value: string; anchor_handle: string }>(
      `select key_value, anchor_handle from sandbox.breb_registrations
        where deleted_at is null and key_value = any(array[?]::text[])`,
      [keyValues],
    );
    return new Map(rows.map((r) => [r.key_value, r.anchor_handle]));
  }

  /** Soft-deletes the live registration of the value; returns it, or undefined when there was none. */
  async deleteLive(keyValue: string): Promise<RegistrationRow | undefined> {
    const [r] = await this.db.query<RawRegistration>(
      `update sandbox.breb_registrations set deleted_at = clock_timestamp()
        where key_value = ? and deleted_at is null returning ${REG_COLS}`,
      [keyValue],
    );
    this.live.wrote();
    return r ? toRegistration(r) : undefined;
  }

  async insertIncoming(tx: Tx, registrationId: string, p: NewIncoming): Promise<IncomingRow> {
    const r = await tx.one<RawIncoming>(
      `insert into sandbox.breb_incoming (provider_transfer_id, registration_id, key_value, amount_cents, payer_name, payer_document, payer_bank, transaction_id)
       values (?, ?::bigint, ?, ?::bigint, ?, ?, ?, ?) returning ${IN_COLS}`,
      [p.providerTransferId, registrationId, p.keyValue, p.amountCents.toString(), p.payerName, p.payerDocument, p.payerBank, p.transactionId],
    );
    if (!r) throw new Error('inbound payment insert returned nothing');
    return toIncoming(r);
  }

  async lockIncoming(tx: Tx, providerTransferId: string): Promise<bigint | undefined> {
    const r = await tx.one<{ amount_cents: string }>(
      `select amount_cents::text as amount_cents from sandbox.breb_incoming where provider_transfer_id = ? for update`,
      [providerTransferId],
    );
    return r ? BigInt(r.amount_cents) : undefined;
  }

  async findReturn(tx: Tx, returnId: string): Promise<ReturnRow | undefined> {
    const r = await tx.one<RawReturn>(`select ${RET_COLS} from sandbox.breb_returns where return_id = ?`, [returnId]);
    return r ? toReturn(r) : undefined;
  }

  async returnedCents(tx: Tx, providerTransferId: string): Promise<bigint> {
    const r = await tx.one<{ sum: string }>(`select coalesce(sum(amount_cents), 0)::text as sum from sandbox.breb_returns where provider_transfer_id = ?`, [
      providerTransferId,
    ]);
    return BigInt(r?.sum ?? '0');
  }

  /**
   * Inserts the return (undefined when a racing request took its id first). The payment's first
   * return is also written to migration 0007's columns on the payment, which older readers still read.
   */
  async insertReturn(tx: Tx, r: { returnId: string; providerTransferId: string; amountCents: bigint }): Promise<ReturnRow | undefined> {
    const row = await tx.one<RawReturn>(
      `insert into sandbox.breb_returns (return_id, provider_transfer_id, amount_cents) values (?, ?, ?::bigint)
       on conflict (return_id) do nothing returning ${RET_COLS}`,
      [r.returnId, r.providerTransferId, r.amountCents.toString()],
    );
    if (!row) return undefined;
    await tx.query(
      `update sandbox.breb_incoming i set return_id = r.return_id, returned_at = r.returned_at
         from sandbox.breb_returns r where r.return_id = ? and i.provider_transfer_id = r.provider_transfer_id and i.return_id is null`,
      [r.returnId],
    );
    return toReturn(row);
  }

  async findIncoming(providerTransferId: string): Promise<IncomingRow | undefined> {
    const [r] = await this.db.query<RawIncoming>(`select ${IN_COLS} from sandbox.breb_incoming where provider_transfer_id = ?`, [providerTransferId]);
    return r ? toIncoming(r) : undefined;
  }

  /** Schedules the inbound payment's callback (due now; seq 1: one per payment), in the caller's transaction; returns its eventId. */
  async insertCallback(tx: Tx, providerTransferId: string, callbackUrl: string, body: (eventId: string) => string, deliveryWindowMs: number): Promise<string> {
    const eventId = randomUUID();
    await tx.query(
      `insert into sandbox.callbacks (event_id, transaction_id, seq, callback_url, body, expires_at)
       values (?::uuid, ?, 1, ?, ?, clock_timestamp() + ?::bigint * interval '1 millisecond')`,
      [eventId, providerTransferId, callbackUrl, body(eventId), deliveryWindowMs],
    );
    return eventId;
  }
}
