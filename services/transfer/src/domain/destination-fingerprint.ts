/**
 * What a payout's money reaches, as screening compares it (docs/security.md "Screening on the destination account"). The AML list and the
 * counterparty limits were keyed on the document the client declares: one digit added to it made the
 * same bank account a new counterparty. They are now keyed on the destination too, through a keyed
 * fingerprint (persistence/data-protection.ts) of the canonical form defined here.
 *
 * ACH: the bank's ACH compensation code and the account number, digits only, leading zeros dropped
 * ("0012345678" ≡ "12345678"). The bank is its ACH code (what the rail routes on), not the API's
 * `bankId`. The account type (ahorros / corriente / depósito) is left out: it is declared by the
 * client like the document, and a bank numbers its accounts in one space, so with it in, flipping
 * the declared type would make the same account a new destination again. Leaving it out can only
 * join two accounts of one bank that share a number — over-screening, the safe side.
 *
 * Bre-B: the directory gives no account behind a key, so the destination is the key the directory
 * resolved (its own `keyValue`, not the client's spelling), trimmed, lower case, without a leading
 * "@". The key type is left out for the same reason as the account type.
 *
 * The version tags (`ach/v1`, `breb-key/v1`) keep the two apart and let the form change later
 * (a new tag, with the old fingerprints recomputed from the sealed numbers).
 */
export type ScreenedDestination = { kind: 'ACH'; bankAchCode: string; accountNumber: string } | { kind: 'BREB'; keyValue: string };

export function canonicalAccountNumber(accountNumber: string): string {
  return accountNumber.replace(/\D/g, '').replace(/^0+(?=\d)/, '');
}

export function canonicalDestination(d: ScreenedDestination): string {
  if (d.kind === 'ACH') return `ach/v1:${d.bankAchCode.replace(/\D/g, '')}:${canonicalAccountNumber(d.accountNumber)}`;
  return `breb-key/v1:${d.keyValue.trim().toLowerCase().replace(/^@/, '')}`;
}
