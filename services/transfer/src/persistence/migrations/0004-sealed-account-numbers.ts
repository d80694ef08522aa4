import { Migration } from '@mikro-orm/migrations';
import { FINGERPRINT_PREFIX, type TransferDataProtection } from '../data-protection.js';

const BATCH = 500;

/**
 * Full ACH account numbers leave the clear: `destination.accountNumber` (jsonb) becomes
 * `account_number_sealed` (AES-256-GCM under TRANSFER_DATA_KEY) plus `account_number_masked`
 * (`****1234`), and a check keeps any clear number out of `destination` from now on. The request
 * hashes of `reference` claims (SHA-256 over bodies holding the number) become keyed fingerprints.
 *
 * Existing rows cannot be sealed in SQL (the key is not in the database), so this migration is made
 * with the service's key (`transferMigrations(protection)`), and seals them here, in batches, in the
 * migration's transaction. `down` opens them back (with the same key); fingerprints stay one-way.
 */
export function sealedAccountNumbers(protection: TransferDataProtection): new (...args: ConstructorParameters<typeof Migration>) => Migration {
  return class Migration0004SealedAccountNumbers extends Migration {
    override name = '0004-sealed-account-numbers';

    override async up(): Promise<void> {
      await this.execute(`alter table transfer.transfers add column account_number_sealed text, add column account_number_masked text`);
      for (;;) {
        const rows = (await this.execute(
          `select id::text as id, destination->>'accountNumber' as account from transfer.transfers
            where destination->>'kind' = 'ACH' and destination->>'accountNumber' is not null
            order by id limit ${BATCH}`,
        )) as Array<{ id: string; account: string }>;
        if (rows.length === 0) break;
        const values: string[] = [];
        const params: string[] = [];
        for (const r of rows) {
          const { sealed, masked } = protection.sealAccount(r.account);
          values.push('(?::uuid, ?, ?)');
          params.push(r.id, sealed, masked);
        }
        await this.execute(
          `update transfer.transfers t set account_number_sealed = v.sealed, account_number_masked = v.masked,
                  destination = t.destination - 'accountNumber'
             from (values ${values.join(', ')}) as v (id, sealed, masked) where t.id = v.id`,
          params,
        );
      }
      await this.execute(`alter table transfer.transfers add constraint transfers_account_sealed_check check (
        destination->>'accountNumber' is null
        and (destination->>'kind' <> 'ACH' or (account_number_sealed is not null and account_number_masked is not null)))`);

      for (;;) {
        const rows = (await this.execute(
          `select company_id, reference, request_hash from transfer.send_references
            where request_hash not like '${FINGERPRINT_PREFIX}%' limit ${BATCH}`,
        )) as Array<{ company_id: string; reference: string; request_hash: string }>;
        if (rows.length === 0) break;
        const values: string[] = [];
        const params: string[] = [];
        for (const r of rows) {
          values.push('(?, ?, ?)');
          params.push(r.company_id, r.reference, protection.fingerprint(r.request_hash));
        }
        await this.execute(
          `update transfer.send_references s set request_hash = v.fp
             from (values ${values.join(', ')}) as v (company_id, reference, fp)
            where s.company_id = v.company_id and s.reference = v.reference`,
          params,
        );
      }
    }

    override async down(): Promise<void> {
      await this.execute('alter table transfer.transfers drop constraint if exists transfers_account_sealed_check');
      const rows = (await this.execute(
        `select id::text as id, account_number_sealed as sealed from transfer.transfers where account_number_sealed is not null`,
      )) as Array<{ id: string; sealed: string }>;
      for (const r of rows) {
        await this.execute(`update transfer.transfers set destination = destination || jsonb_build_object('accountNumber', ?::text) where id = ?::uuid`, [
          protection.openAccount(r.sealed),
          r.id,
        ]);
      }
      await this.execute('alter table transfer.transfers drop column account_number_sealed, drop column account_number_masked');
    }
  };
}
