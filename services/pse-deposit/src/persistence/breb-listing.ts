import type { SqlTx } from '@wallet/platform';
import type { BrebDeposit } from '../domain/breb-deposit.js';
import type { BrebListing, BrebUpsertOutcome } from '../app/ports.js';

const rank = (col: string) => `(case ${col} when 'UNASSIGNED' then 1 when 'ASSIGNED' then 2 when 'REVERSED' then 3 else 0 end)`;

/**
 * Inserts a Bre-B deposit into the listing, or moves an existing Bre-B row of the same company to
 * the event's state when that state is different and the event is newer (occurredAt; equal times:
 * the later status in UNASSIGNED < ASSIGNED < REVERSED). A repeat, an older event arriving late, a
 * row of another company or a PSE row with the same id change nothing. Fields the event leaves out
 * keep their stored values; created_at (the listing position) never moves. Runs in the inbox
 * transaction (`?` placeholders, native prepared statements).
 */
export async function upsertBrebDeposit(tx: SqlTx, d: BrebDeposit, eventId: string): Promise<BrebUpsertOutcome> {
  const k = d.brebKey;
  const rows = await tx.query<{ id: string; inserted: boolean }>(
    `
    insert into pse_deposit.deposits as d (id, company_id, source, status, amount, fixed_fee, variable_fee, subtotal_fee,
      iva_applicable, iva_amount, total_charged, net_amount, currency, payer_name, payer_document_number, payer_bank,
      provider_transfer_id, provider_confirmed_at, breb_key_id, breb_key_external_id, breb_key_name, breb_key_value,
      created_at, breb_event_at, breb_event_id)
    values (?, ?, 'BREB', ?, ?::bigint, ?::bigint, 0, ?::bigint, ?::boolean, ?::bigint, ?::bigint, ?::bigint, ?, ?, ?, ?,
      ?, ?::timestamptz, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?)
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
    returning d.id, (xmax = 0) as inserted`,
    [
      d.id,
      d.companyId,
      d.status,
      d.amount.toString(),
      d.fee.toString(),
      d.fee.toString(),
      d.iva > 0n,
      d.iva.toString(),
      (d.fee + d.iva).toString(),
      d.net.toString(),
      d.currency,
      d.payerName,
      d.payerDocument,
      d.payerBank,
      d.providerTransferId,
      d.providerConfirmedAt?.toISOString() ?? null,
      k?.id ?? null,
      k ? k.externalId || null : null,
      k ? k.name || null : null,
      k ? k.value || null : null,
      d.createdAt.toISOString(),
      d.eventAt.toISOString(),
      eventId,
    ],
  );
  const row = rows[0];
  if (!row) return 'unchanged';
  await tx.query(`insert into pse_deposit.state_history (deposit_id, status, pending_step, reason) values (?, ?, null, ?)`, [
    d.id,
    d.status,
    `breb event ${eventId}`,
  ]);
  return row.inserted ? 'inserted' : 'updated';
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
export const sqlBrebListing: BrebListing = { upsert: upsertBrebDeposit, storedState: storedBrebState };
