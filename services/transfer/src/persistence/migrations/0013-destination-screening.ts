import { Migration } from '@mikro-orm/migrations';
import type { TransferDataProtection } from '../data-protection.js';

const BATCH = 500;
/** Transfers older than this can no longer count towards a limit (the month window is at most 31 days long). */
const BACKFILL_DAYS = 35;

/**
 * Screening on what the money touches (docs/security.md "Screening on the destination account").
 *
 * - `transfers.destination_fingerprint`: the keyed fingerprint of the payout's destination
 *   (domain/destination-fingerprint.ts: ACH bank code + account number; Bre-B the resolved key),
 *   indexed like the document for the counterparty limits. Nullable: SQL cannot compute it (the key
 *   is not in the database). Existing transfers of the last BACKFILL_DAYS days are filled here, from
 *   the sealed account numbers and the stored keys, with the service's key (as 0004 sealed them);
 *   older ones stay null: they are outside every limit window. A transfer without a fingerprint
 *   (older, or recorded by a replica still on the previous version during a rolling deploy) counts
 *   towards its document's limits only.
 * - `aml_entries` take a bank account besides a document (`kind` BANK_ACCOUNT): its fingerprint, the
 *   bank code and a masked number only — the full number is never stored. One live entry per account.
 * - `locked_destination_usage`: 0009's function with the destination: it takes the limit locks of
 *   the document AND of the destination (ascending, as a bulk payout takes its own, so the two never
 *   deadlock), then one query sums both (one more index scan, same round trip) and answers, for the
 *   day and the month, the larger of the document's and the destination's usage: a send must fit
 *   within the limit on both. 0009's function stays for replicas of the previous version during the
 *   rollout (a later migration drops it).
 */
export function destinationScreening(protection: TransferDataProtection): new (...args: ConstructorParameters<typeof Migration>) => Migration {
  return class Migration0013DestinationScreening extends Migration {
    override name = '0013-destination-screening';

    override async up(): Promise<void> {
      await this.execute('alter table transfer.transfers add column if not exists destination_fingerprint text');
      let after = '00000000-0000-0000-0000-000000000000';
      for (;;) {
        const rows = (await this.execute(
          `select id::text as id, destination->>'kind' as kind, destination->>'bankAchCode' as bank, account_number_sealed as sealed,
                  destination->>'keyValue' as key
             from transfer.transfers
            where destination_fingerprint is null and created_at >= now() - interval '${BACKFILL_DAYS} days' and id > ?::uuid
            order by id limit ${BATCH}`,
          [after],
        )) as Array<{ id: string; kind: string; bank: string | null; sealed: string | null; key: string | null }>;
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.id;
        const values: string[] = [];
        const params: string[] = [];
        for (const r of rows) {
          const fp =
            r.kind === 'ACH' && r.sealed
              ? protection.destinationFingerprint({ kind: 'ACH', bankAchCode: r.bank ?? '', accountNumber: protection.openAccount(r.sealed) })
              : r.kind === 'BREB' && r.key
                ? protection.destinationFingerprint({ kind: 'BREB', keyValue: r.key })
                : null;
          if (!fp) continue;
          values.push('(?::uuid, ?)');
          params.push(r.id, fp);
        }
        if (values.length > 0) {
          await this.execute(
            `update transfer.transfers t set destination_fingerprint = v.fp from (values ${values.join(', ')}) as v (id, fp) where t.id = v.id`,
            params,
          );
        }
      }
      await this.execute(`create index if not exists transfers_destination_idx on transfer.transfers (company_id, destination_fingerprint, created_at)
        where destination_fingerprint is not null`);

      await this.execute(`alter table transfer.aml_entries
        alter column document_number drop not null,
        alter column normalized_document drop not null,
        add column kind text not null default 'DOCUMENT',
        add column destination_fingerprint text,
        add column bank_code text,
        add column account_number_masked text`);
      await this.execute(`alter table transfer.aml_entries add constraint aml_entries_kind_check check (
        (kind = 'DOCUMENT' and document_number is not null and normalized_document is not null and destination_fingerprint is null)
        or (kind = 'BANK_ACCOUNT' and document_number is null and normalized_document is null and destination_fingerprint is not null
            and bank_code is not null and account_number_masked is not null))`);
      await this.execute(`create unique index aml_entries_live_destination_uq on transfer.aml_entries (destination_fingerprint)
        where removed_at is null and destination_fingerprint is not null`);

      // The two locks in ascending order (the destination's may be null: a send without a fingerprint;
      // or equal: both in one bucket), each its own PERFORM so the order is the statement order.
      await this.execute(`create or replace function transfer.locked_destination_usage(
          p_document_lock bigint, p_destination_lock bigint, p_company text, p_counterparty text, p_destination text,
          p_day_start timestamptz, p_month_start timestamptz, p_states text[])
        returns table (day_sum numeric, month_sum numeric)
        language plpgsql volatile as $$
        begin
          if p_destination_lock is null or p_destination_lock = p_document_lock then
            perform pg_advisory_xact_lock(p_document_lock);
          else
            perform pg_advisory_xact_lock(least(p_document_lock, p_destination_lock));
            perform pg_advisory_xact_lock(greatest(p_document_lock, p_destination_lock));
          end if;
          return query
            select greatest(coalesce(sum(t.amount) filter (where t.counterparty_document = p_counterparty and t.created_at >= p_day_start), 0),
                            coalesce(sum(t.amount) filter (where t.destination_fingerprint = p_destination and t.created_at >= p_day_start), 0)),
                   greatest(coalesce(sum(t.amount) filter (where t.counterparty_document = p_counterparty), 0),
                            coalesce(sum(t.amount) filter (where t.destination_fingerprint = p_destination), 0))
              from transfer.transfers t
             where t.company_id = p_company and t.created_at >= p_month_start and t.state = any(p_states)
               and (t.counterparty_document = p_counterparty or t.destination_fingerprint = p_destination);
        end $$`);
    }

    override async down(): Promise<void> {
      await this.execute('drop function if exists transfer.locked_destination_usage(bigint, bigint, text, text, text, timestamptz, timestamptz, text[])');
      await this.execute('drop index if exists transfer.aml_entries_live_destination_uq');
      await this.execute(`delete from transfer.aml_entries where kind = 'BANK_ACCOUNT'`);
      await this.execute('alter table transfer.aml_entries drop constraint if exists aml_entries_kind_check');
      await this.execute(`alter table transfer.aml_entries drop column kind, drop column destination_fingerprint, drop column bank_code,
        drop column account_number_masked, alter column document_number set not null, alter column normalized_document set not null`);
      await this.execute('drop index if exists transfer.transfers_destination_idx');
      await this.execute('alter table transfer.transfers drop column if exists destination_fingerprint');
    }
  };
}
