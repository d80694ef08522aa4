import type { SqlTx } from '@wallet/platform';
import type { BrebDeposit } from '../domain/breb-deposit.js';
import type { BrebListing, BrebUpsertOutcome } from '../app/ports.js';

const rank = (col: string) => `(case ${col} when 'UNASSIGNED' then 1 when 'ASSIGNED' then 2 when 'REVERSED' then 3 else 0 end)`;

/**
 * Inserts Bre-B deposits into the listing, or moves an existing Bre-B row of the same company to
 * the event's state when that state is different and the event is newer (occurredAt; equal times:
 * the later status in UNASSIGNED < ASSIGNED < REVERSED). A repeat, an older event arriving late, a
 * row of another company or a PSE row with the same id change nothing. Fields the event leaves out
 * keep their stored values; created_at (the listing position) never moves. A page of events is one
 * statement (with the history rows of what changed); its deposit ids must be distinct (one row is
 * changed once per statement). Runs in the inbox transaction (`?` placeholders, native prepared
 * statements). Returns the outcome of each id that changed; an id left out changed nothing.
 */
export async function upsertBrebDeposits(tx: SqlTx, items: ReadonlyArray<{ d: BrebDeposit; eventId: string }>): Promise<Map<string, BrebUpsertOutcome>> {
  if (items.length === 0) return new Map();
  // In id order: two pages that share deposits lock them in the same order.
  const sorted = [...items].sort((a, b) => (a.d.id < b.d.id ? -1 : a.d.id > b.d.id ? 1 : 0));
  const col = <T>(f: (d: BrebDeposit, eventId: string) => T): T[] => sorted.map((i) => f(i.d, i.eventId));
  const rows = await tx.query<{ id: string; inserted: boolean }>(
    `
    with v as (
      select * from unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::boolean[], ?::bigint[], ?::bigint[], ?::bigint[],
        ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::text[], ?::text[], ?::text[], ?::text[],
        ?::timestamptz[], ?::timestamptz[], ?::text[])
        as v(id, company_id, status, amount, fee, iva_applicable, iva_amount, total_charged, net_amount, currency, payer_name,
          payer_document_number, payer_bank, provider_transfer_id, provider_confirmed_at, breb_key_id, breb_key_external_id,
          breb_key_name, breb_key_value, created_at, breb_event_at, breb_event_id)),
    up as (
      insert into pse_deposit.deposits as d (id, company_id, source, status, amount, fixed_fee, variable_fee, subtotal_fee,
        iva_applicable, iva_amount, total_charged, net_amount, currency, payer_name, payer_document_number, payer_bank,
        provider_transfer_id, provider_confirmed_at, breb_key_id, breb_key_external_id, breb_key_name, breb_key_value,
        created_at, breb_event_at, breb_event_id)
      select id, company_id, 'BREB', status, amount, fee, 0, fee, iva_applicable, iva_amount, total_charged, net_amount, currency,
        payer_name, payer_document_number, payer_bank, provider_transfer_id, provider_confirmed_at, breb_key_id, breb_key_external_id,
        breb_key_name, breb_key_value, created_at, breb_event_at, breb_event_id
      from v
      on conflict (id) do update set
        status = excluded.status,
        amount = excluded.amount, fixed_fee = excluded.fixed_fee, variable_fee = excluded.variable_fee,
        subtotal_fee = excluded.subtotal_fee, iva_applicable = excluded.iva_applicable, iva_amount = excluded.iva_amount,
        total_charged = excluded.total_charged, net_amount = excluded.net_amount, currency = excluded.currency,
        payer_name = coalesce(excluded.payer_name, d.payer_name),
        payer_document_number = coalesce(excluded.payer_document_number, d.payer_document_number),
        payer_bank = coalesce(excluded.payer_bank, d.payer_bank),
        provider_transfer_id = coalesce(excluded.provider_transfer_id, d.provider_transfer_id),
        provider_confirmed_at = coalesce(excluded.provider_confirmed_at, d.provider_confirmed_at),
        breb_key_id = coalesce(excluded.breb_key_id, d.breb_key_id),
        breb_key_external_id = case when excluded.breb_key_id is null then d.breb_key_external_id else excluded.breb_key_external_id end,
        breb_key_name = case when excluded.breb_key_id is null then d.breb_key_name else excluded.breb_key_name end,
        breb_key_value = case when excluded.breb_key_id is null then d.breb_key_value else excluded.breb_key_value end,
        breb_event_at = excluded.breb_event_at, breb_event_id = excluded.breb_event_id, updated_at = now()
      where d.source = 'BREB' and d.company_id = excluded.company_id and d.status <> excluded.status
        and (excluded.breb_event_at > d.breb_event_at
          or (excluded.breb_event_at = d.breb_event_at and ${rank('excluded.status')} > ${rank('d.status')}))
      returning d.id, d.status, d.breb_event_id, (xmax = 0) as inserted),
    h as (
      insert into pse_deposit.state_history (deposit_id, status, pending_step, reason)
      select id, status, null, 'breb event ' || breb_event_id from up)
    select id, inserted from up`,
    [
      col((d) => d.id),
      col((d) => d.companyId),
      col((d) => d.status),
      col((d) => d.amount.toString()),
      col((d) => d.fee.toString()),
      col((d) => d.iva > 0n),
      col((d) => d.iva.toString()),
      col((d) => (d.fee + d.iva).toString()),
      col((d) => d.net.toString()),
      col((d) => d.currency),
      col((d) => d.payerName),
      col((d) => d.payerDocument),
      col((d) => d.payerBank),
      col((d) => d.providerTransferId),
      col((d) => d.providerConfirmedAt?.toISOString() ?? null),
      col((d) => d.brebKey?.id ?? null),
      col((d) => (d.brebKey ? d.brebKey.externalId || null : null)),
      col((d) => (d.brebKey ? d.brebKey.name || null : null)),
      col((d) => (d.brebKey ? d.brebKey.value || null : null)),
      col((d) => d.createdAt.toISOString()),
      col((d) => d.eventAt.toISOString()),
      col((_, eventId) => eventId),
    ],
  );
  return new Map(rows.map((r) => [r.id, r.inserted ? 'inserted' : 'updated']));
}

/** One deposit's event (upsertBrebDeposits of one). */
export async function upsertBrebDeposit(tx: SqlTx, d: BrebDeposit, eventId: string): Promise<BrebUpsertOutcome> {
  return (await upsertBrebDeposits(tx, [{ d, eventId }])).get(d.id) ?? 'unchanged';
}

/** Why an upsert changed nothing (for the log): the stored row's source / company / status, if any. */
export async function storedBrebState(tx: SqlTx, id: string): Promise<{ source: string; company_id: string; status: string } | undefined> {
  const rows = await tx.query<{ source: string; company_id: string; status: string }>(
    `select source, company_id, status from pse_deposit.deposits where id = ?`,
    [id],
  );
  return rows[0];
}

/** The app's BrebListing port. */
export const sqlBrebListing: BrebListing = { upsert: upsertBrebDeposit, upsertMany: upsertBrebDeposits, storedState: storedBrebState };
