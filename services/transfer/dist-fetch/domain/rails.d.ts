/** The two outgoing rails, their caps and the minimum (§8). */
export type Rail = 'BREB' | 'ACH';
export declare const MIN_AMOUNT = 100n;
export declare const MAX_JSON_CENTS: bigint;
export declare const RAIL_CAPS: Record<Rail, bigint>;
export declare const CAP_ERROR: Record<Rail, 'AMOUNT_EXCEEDS_BREB_CAP' | 'AMOUNT_EXCEEDS_ACH_CAP'>;
export declare const FEE_OPERATION: Record<Rail, 'BREB_OUTFLOW' | 'ACH_OUTFLOW'>;
/** ACH account types (§4.5): 20 Ahorros, 21 Corriente, 22 Depósito electrónico. */
export declare const ACH_ACCOUNT_TYPES: Record<number, string>;
/** ACH document types (§4.5): 1 CC, 4 CE, 5 Pasaporte, 8 NIT. */
export declare const ACH_DOCUMENT_TYPES: Record<number, string>;
/** The amount the fee is computed on and that is sent; net = amount − subtotal fee (CONTRACT §2). */
export declare function netAmount(amount: bigint, subtotalFee: bigint): bigint;
