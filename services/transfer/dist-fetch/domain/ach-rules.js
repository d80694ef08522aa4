/**
 * Internal destination rules for ACH sends (400 DESTINATION_REJECTED, §7.3 "bank or account rejected
 * by internal rules"). Two moments:
 *
 * - before asking the rail: the bank must be one we can route to, i.e. the gateway resolved the
 *   `bankId` to a name and a 4-digit ACH compensation code. Without a code there is nothing to send.
 * - after the rail validated the account: an account number made of one repeated digit
 *   ("0000", "1111111111", …) is a placeholder, not an account, and is refused by policy even when a
 *   bank would accept it. The rail speaks first so that its own verdict (422 INVALID_BANK_ACCOUNT,
 *   e.g. the sandbox's `0000000000`) is the one the client sees for accounts it knows to be invalid.
 */
const ACH_CODE = /^\d{4}$/;
export function bankRoutable(bankName, achCode) {
    return !!bankName && bankName.trim().length > 0 && !!achCode && ACH_CODE.test(achCode);
}
export function placeholderAccount(accountNumber) {
    return /^(\d)\1*$/.test(accountNumber);
}
//# sourceMappingURL=ach-rules.js.map