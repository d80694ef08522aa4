/**
 * The payer's app reading a Bre-B QR (EMVCo merchant-presented, EMV QRCPS-MPM): TLV fields — 2-digit
 * tag, 2-digit length, value — ending with tag 63, the CRC16-CCITT (0x1021, init 0xFFFF) of every
 * character before its value, "6304" included. The sandbox's own reader: it never imports a service.
 * What it takes: the key from the merchant account template (26-51) whose GUI (sub-tag 00) is
 * CO.BREB (sub-tag 01), the amount from tag 54 (pesos, up to 2 decimals), the transaction id from
 * the additional data template 62 (sub-tag 05) and the expiry from template 80 (GUI CO.BREB, sub-tag
 * 01 = UTC YYYYMMDDHHMMSS).
 */

export const BREB_GUI = 'CO.BREB';

export interface BrebQr {
  keyValue: string;
  /** Tag 01: "11" static, "12" dynamic (null when absent). */
  pointOfInitiation: string | null;
  amountCents: bigint | null;
  transactionId: string | null;
  expiresAt: Date | null;
}

/** Why a payload is not a Bre-B QR the payer's app would pay. */
export class InvalidQr extends Error {
  override name = 'InvalidQr';
}

function crc16ccitt(s: string): number {
  let crc = 0xffff;
  for (const b of Buffer.from(s, 'utf8')) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The fields of a TLV string by tag (the first of a repeated tag); InvalidQr when truncated or malformed. */
function readTlv(s: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < s.length) {
    const tag = s.slice(i, i + 2);
    const len = s.slice(i + 2, i + 4);
    if (!/^\d{2}$/.test(tag) || !/^\d{2}$/.test(len)) throw new InvalidQr(`malformed field at ${i}`);
    const end = i + 4 + Number(len);
    if (end > s.length) throw new InvalidQr(`field ${tag} is truncated`);
    if (!out.has(tag)) out.set(tag, s.slice(i + 4, end));
    i = end;
  }
  return out;
}

/** A UTC YYYYMMDDHHMMSS stamp as a Date; null when it is not one. */
function utcStamp(s: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, se));
  // Date.UTC rolls 2026-02-30 over into March: a stamp that does not read back is not a date.
  return t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && t.getUTCHours() === h && t.getUTCMinutes() === mi && t.getUTCSeconds() === se ? t : null;
}

/** Reads a Bre-B QR payload; InvalidQr when the CRC does not check, a field is malformed, or it carries no CO.BREB key. */
export function readBrebQr(payload: string): BrebQr {
  const p = payload.trim();
  if (!/^[\x20-\x7e]+$/.test(p)) throw new InvalidQr('not printable ASCII');
  const crcAt = p.length - 8;
  if (crcAt < 0 || p.slice(crcAt, crcAt + 4) !== '6304') throw new InvalidQr('no CRC (tag 63) at the end');
  const crc = crc16ccitt(p.slice(0, crcAt + 4))
    .toString(16)
    .toUpperCase()
    .padStart(4, '0');
  if (crc !== p.slice(crcAt + 4).toUpperCase()) throw new InvalidQr('CRC does not check');
  const fields = readTlv(p);
  if (fields.get('00') !== '01') throw new InvalidQr('payload format indicator (00) is not 01');

  let keyValue: string | null = null;
  for (let t = 26; t <= 51 && keyValue === null; t++) {
    const v = fields.get(String(t));
    if (!v) continue;
    const sub = readTlv(v);
    if (sub.get('00')?.toUpperCase() === BREB_GUI) keyValue = sub.get('01') ?? null;
  }
  if (!keyValue) throw new InvalidQr('no Bre-B key (template 26-51 with GUI CO.BREB)');

  let amountCents: bigint | null = null;
  const amount = fields.get('54');
  if (amount !== undefined) {
    const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(amount);
    if (!m) throw new InvalidQr('amount (54) is not a number of pesos');
    amountCents = BigInt(m[1]!) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
    if (amountCents <= 0n) throw new InvalidQr('amount (54) is zero');
  }

  const additional = fields.has('62') ? readTlv(fields.get('62')!) : new Map<string, string>();
  const transactionId = additional.get('05') ?? null;
  // The network carries it in the participant's notification: at most 35 printable characters.
  if (transactionId !== null && transactionId.length > 35) throw new InvalidQr('transaction id (62/05) longer than 35 characters');
  let expiresAt: Date | null = null;
  const expiryTemplate = fields.has('80') ? readTlv(fields.get('80')!) : undefined;
  if (expiryTemplate && expiryTemplate.get('00')?.toUpperCase() === BREB_GUI && expiryTemplate.has('01')) {
    expiresAt = utcStamp(expiryTemplate.get('01')!);
    if (!expiresAt) throw new InvalidQr('expiry (80/01) is not UTC YYYYMMDDHHMMSS');
  }
  return { keyValue, pointOfInitiation: fields.get('01') ?? null, amountCents, transactionId, expiresAt };
}
