/**
 * Bre-B keys (§4.2, CONTRACT §9): the accepted forms, AUTO detection and the length rule.
 *
 * - length outside 3-64 code points            → a schema problem (400 INVALID_REQUEST)
 * - a key type outside the accepted values      → a schema problem (400 INVALID_REQUEST)
 * - within length but matching no accepted form → INVALID_KEY (422)
 * - a given type the value does not match       → INVALID_KEY (422)
 *
 * Digits-only values: 10 digits starting with 3 → PHONE, otherwise 5-15 digits → NRIC (CONTRACT
 * §9); other digit strings of 3-40 characters are aliases (the directory does the same).
 */
export declare const KEY_TYPES: readonly ["PHONE", "EMAIL", "ALPHANUM", "NRIC"];
export type KeyType = (typeof KEY_TYPES)[number];
export type KeyTypeInput = KeyType | 'AUTO';
export declare const KEY_MIN_LENGTH = 3;
export declare const KEY_MAX_LENGTH = 64;
export declare function isKeyType(v: string): v is KeyType;
/** '' (proto3 default) and 'AUTO' both mean detect; anything else must be one of the four types. */
export declare function parseKeyTypeInput(v: string | null | undefined): KeyTypeInput | null;
export declare function keyLengthOk(value: string): boolean;
export declare function matchesForm(type: KeyType, value: string): boolean;
/** The type AUTO detection gives, or null when the value matches no accepted form. */
export declare function detectKeyType(value: string): KeyType | null;
export type KeyCheck = {
    ok: true;
    keyType: KeyType;
    keyValue: string;
} | {
    ok: false;
    problem: 'LENGTH' | 'TYPE';
} | {
    ok: false;
    problem: 'INVALID_KEY';
    reason: string;
};
/** Classifies a key value (and optional requested type) per the rules above. */
export declare function checkKey(value: string, requested: string | null | undefined): KeyCheck;
