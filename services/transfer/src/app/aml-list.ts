import { AppError, maskAccount } from '@wallet/platform';
import { canonicalAccountNumber } from '../domain/destination-fingerprint.js';
import { normalizeDocument } from '../domain/names.js';
import type { TransferDeps } from './deps.js';
import type { AmlEntry } from './ports.js';
import { Problems, checkText, isUuid, orNull } from './validation.js';

/** A bank account to list: the bank's ACH compensation code and the account number. */
export interface AmlBankAccountInput {
  bankCode: string;
  accountNumber: string;
}

/**
 * The AML list (§4.5, CONTRACT §2): documents that may not take part in a send, as payer company
 * (its NIT) or as destination, and bank accounts no payout may reach whatever document it declares
 * (docs/security.md "Screening on the destination account"). Admin operations, no company scope. Adding an entry already listed answers
 * the live entry; removal is a soft delete (the entry stays for audit) and is idempotent.
 *
 * A bank account is kept as the keyed fingerprint of its canonical form (the one every ACH payout is
 * fingerprinted with: domain/destination-fingerprint.ts), its bank code and the number masked: the
 * full number is never stored, logged nor answered.
 */
export class AddAmlEntry {
  constructor(private readonly deps: TransferDeps) {}

  async execute(cmd: {
    documentNumber?: string | undefined;
    bankAccount?: AmlBankAccountInput | undefined;
    name?: string | undefined;
    reason: string;
  }): Promise<AmlEntry> {
    const p = new Problems();
    const documentNumber = (cmd.documentNumber ?? '').trim();
    const account = cmd.bankAccount;
    if (account && documentNumber) p.add('bankAccount', 'is given instead of documentNumber, not with it');
    else if (account) {
      if (!/^\d{4}$/.test(account.bankCode)) p.add('bankAccount.bankCode', "must be the bank's 4-digit ACH code");
      if (!/^\d{4,32}$/.test(account.accountNumber)) p.add('bankAccount.accountNumber', 'must be 4 to 32 digits');
      else if (/^0+$/.test(account.accountNumber)) p.add('bankAccount.accountNumber', 'must not be all zeros');
    } else {
      const normalized = normalizeDocument(documentNumber);
      if (!documentNumber) p.add('documentNumber', 'is required (or bankAccount)');
      else if ([...documentNumber].length > 32 || normalized.length < 3)
        p.add('documentNumber', 'must be 3 to 32 characters with at least 3 letters or digits');
    }
    checkText(p, 'name', orNull(cmd.name), { max: 200 });
    checkText(p, 'reason', orNull(cmd.reason), { max: 500, required: true });
    p.throwIfAny();
    const common = { id: this.deps.newId(), name: orNull(cmd.name)?.trim() ?? null, reason: cmd.reason.trim() };
    const entry = account
      ? await this.deps.store.addAmlEntry({
          ...common,
          kind: 'BANK_ACCOUNT',
          bankCode: account.bankCode,
          fingerprint: this.deps.destinationFingerprint({ kind: 'ACH', bankAchCode: account.bankCode, accountNumber: account.accountNumber }),
          masked: maskAccount(canonicalAccountNumber(account.accountNumber)) ?? '',
        })
      : await this.deps.store.addAmlEntry({ ...common, kind: 'DOCUMENT', documentNumber, normalized: normalizeDocument(documentNumber) });
    this.deps.log.info({ amlEntryId: entry.id, kind: entry.kind }, 'AML entry added');
    return entry;
  }
}

export class RemoveAmlEntry {
  constructor(private readonly deps: TransferDeps) {}

  async execute(cmd: { id: string }): Promise<AmlEntry> {
    if (!isUuid(cmd.id)) throw new AppError('AML_ENTRY_NOT_FOUND');
    const entry = await this.deps.store.removeAmlEntry(cmd.id.toLowerCase());
    if (!entry) throw new AppError('AML_ENTRY_NOT_FOUND');
    this.deps.log.info({ amlEntryId: entry.id }, 'AML entry removed');
    return entry;
  }
}
