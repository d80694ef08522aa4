/**
 * Holder names and documents as compliance compares them.
 *
 * Names: NFD, diacritics stripped, whitespace collapsed, upper case: "José  Pérez" ≡ "JOSE PEREZ".
 * Documents: only letters and digits, upper case: "900.123.456-7" ≡ "9001234567".
 */
export function normalizeName(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/\s+/gu, ' ')
    .trim()
    .toUpperCase();
}

export function sameHolderName(a: string, b: string): boolean {
  return normalizeName(a) === normalizeName(b);
}

export function normalizeDocument(doc: string): string {
  return doc.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
}

/**
 * The documents an AML entry may list for a party: the normalized document and, for a NIT written
 * with its check digit ("900123456-7"), the NIT without it ("900123456").
 */
export function amlCandidates(doc: string): string[] {
  const out = new Set<string>();
  const n = normalizeDocument(doc);
  if (n) out.add(n);
  const m = /^\s*([0-9.\s]+)-\s*([0-9])\s*$/.exec(doc);
  if (m) {
    const base = normalizeDocument(m[1]!);
    if (base) out.add(base);
  }
  return [...out];
}

/**
 * Everything a send is screened on against the AML list: the payer company's NIT and the destination
 * party's document as the request wrote it (never a normalised copy: "900123456-7" must also match an
 * entry "900123456"), each through `amlCandidates`, and the destination account's fingerprint when
 * there is one (docs/security.md "Screening on the destination account": a listed account is refused whatever document the send declares).
 * The single send and every batch line (at validation and again at execution) screen exactly these.
 */
export function sendAmlCandidates(companyNit: string, counterpartyDocument: string, destinationFingerprint?: string | null): string[] {
  const out = [...amlCandidates(companyNit), ...amlCandidates(counterpartyDocument)];
  if (destinationFingerprint) out.push(destinationFingerprint);
  return out;
}
