/** The two outgoing rails, their caps and the minimum (§8). */
export const MIN_AMOUNT = 100n;
export const MAX_JSON_CENTS = BigInt(Number.MAX_SAFE_INTEGER);
export const RAIL_CAPS = {
    BREB: 1200000000n,
    ACH: 200000000000n,
};
export const CAP_ERROR = {
    BREB: 'AMOUNT_EXCEEDS_BREB_CAP',
    ACH: 'AMOUNT_EXCEEDS_ACH_CAP',
};
export const FEE_OPERATION = {
    BREB: 'BREB_OUTFLOW',
    ACH: 'ACH_OUTFLOW',
};
/** ACH account types (§4.5): 20 Ahorros, 21 Corriente, 22 Depósito electrónico. */
export const ACH_ACCOUNT_TYPES = {
    20: 'Ahorros',
    21: 'Corriente',
    22: 'Depósito electrónico',
};
/** ACH document types (§4.5): 1 CC, 4 CE, 5 Pasaporte, 8 NIT. */
export const ACH_DOCUMENT_TYPES = {
    1: 'CC',
    4: 'CE',
    5: 'Pasaporte',
    8: 'NIT',
};
/** The amount the fee is computed on and that is sent; net = amount − subtotal fee (CONTRACT §2). */
export function netAmount(amount, subtotalFee) {
    return amount - subtotalFee;
}
//# sourceMappingURL=rails.js.map