/**
 * Holder names and documents as compliance compares them.
 *
 * Names: NFD, diacritics stripped, whitespace collapsed, upper case: "José  Pérez" ≡ "JOSE PEREZ".
 * Documents: only letters and digits, upper case: "900.123.456-7" ≡ "9001234567".
 */
export declare function normalizeName(name: string): string;
export declare function sameHolderName(a: string, b: string): boolean;
export declare function normalizeDocument(doc: string): string;
/**
 * The documents an AML entry may list for a party: the normalized document and, for a NIT written
 * with its check digit ("900123456-7"), the NIT without it ("900123456").
 */
export declare function amlCandidates(doc: string): string[];
