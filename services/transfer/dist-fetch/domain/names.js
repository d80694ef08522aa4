/**
 * Holder names and documents as compliance compares them.
 *
 * Names: NFD, diacritics stripped, whitespace collapsed, upper case: "José  Pérez" ≡ "JOSE PEREZ".
 * Documents: only letters and digits, upper case: "900.123.456-7" ≡ "9001234567".
 */
export function normalizeName(name) {
    return name
        .normalize('NFD')
        .replace(/\p{M}+/gu, '')
        .replace(/\s+/gu, ' ')
        .trim()
        .toUpperCase();
}
export function sameHolderName(a, b) {
    return normalizeName(a) === normalizeName(b);
}
export function normalizeDocument(doc) {
    return doc.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
}
/**
 * The documents an AML entry may list for a party: the normalized document and, for a NIT written
 * with its check digit ("900123456-7"), the NIT without it ("900123456").
 */
export function amlCandidates(doc) {
    const out = new Set();
    const n = normalizeDocument(doc);
    if (n)
        out.add(n);
    const m = /^\s*([0-9.\s]+)-\s*([0-9])\s*$/.exec(doc);
    if (m) {
        const base = normalizeDocument(m[1]);
        if (base)
            out.add(base);
    }
    return [...out];
}
//# sourceMappingURL=names.js.map