/**
 * EMVCo merchant-presented QR (EMV QRCPS-MPM): a string of TLV fields — 2-digit tag, 2-digit length
 * (in characters), value — ending with tag 63, the CRC16-CCITT (poly 0x1021, init 0xFFFF, no
 * reflection, no final xor) over every byte before the CRC value, including "6304", as 4 uppercase
 * hex digits. Values are restricted to printable ASCII here, so characters = bytes.
 */

export function crc16ccitt(input: string | Uint8Array): number {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

export const crcHex = (s: string): string => crc16ccitt(s).toString(16).toUpperCase().padStart(4, '0');

export function tlv(tag: string, value: string): string {
  if (!/^\d{2}$/.test(tag)) throw new Error(`bad EMVCo tag ${tag}`);
  if (value.length < 1 || value.length > 99) throw new Error(`EMVCo field ${tag}: length ${value.length} outside 1-99`);
  return `${tag}${String(value.length).padStart(2, '0')}${value}`;
}

/** Printable ASCII only: accents are dropped (Ñ → N, é → e), anything else becomes a space; trimmed; cut to max. */
export function emvText(s: string, max: number): string {
  const ascii = s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return ascii.slice(0, max).trim();
}

export const BREB_GUI = 'CO.BREB';

export interface StaticQrInput {
  keyValue: string;
  merchantName: string;
  merchantCity: string;
  reference: string;
  /** The merchant account information template tag (26-51). */
  accountTag?: string;
  mcc?: string;
}

/** The static (point of initiation 11) Bre-B collect QR: the key in the account template, COP, CO. */
export function encodeStaticQr(i: StaticQrInput): string {
  const name = emvText(i.merchantName, 25) || 'NA';
  const city = emvText(i.merchantCity, 15) || 'BOGOTA';
  const body =
    [
      tlv('00', '01'),
      tlv('01', '11'),
      tlv(i.accountTag ?? '26', tlv('00', BREB_GUI) + tlv('01', i.keyValue)),
      tlv('52', i.mcc ?? '0000'),
      tlv('53', '170'),
      tlv('58', 'CO'),
      tlv('59', name),
      tlv('60', city),
      tlv('62', tlv('05', emvText(i.reference, 25))),
    ].join('') + '6304';
  return body + crcHex(body);
}

export interface DynamicQrInput {
  keyValue: string;
  merchantName: string;
  merchantCity: string;
  /** The cobro's transaction id (tag 62 sub-tag 05): the payer's app sends it back with the payment. */
  transactionId: string;
  /** A fixed amount (tag 54, pesos with 2 decimals); absent: the payer types the amount. */
  amountCents?: bigint | null;
  /** Written in template 80 (GUI CO.BREB, sub-tag 01) as UTC YYYYMMDDHHMMSS: the payer's app refuses it afterwards. */
  expiresAt: Date;
  accountTag?: string;
  mcc?: string;
}

/** Centavos as EMVCo tag 54 writes an amount: pesos with 2 decimals ("1500.00"), no separators. */
export function emvAmount(cents: bigint): string {
  if (cents <= 0n) throw new Error('EMVCo amount must be positive');
  const s = cents.toString().padStart(3, '0');
  const v = `${s.slice(0, -2)}.${s.slice(-2)}`;
  if (v.length > 13) throw new Error('EMVCo amount longer than 13 characters');
  return v;
}

/** A time as the Bre-B expiry sub-tag writes it: UTC YYYYMMDDHHMMSS. */
export const emvUtcStamp = (d: Date): string => d.toISOString().slice(0, 19).replace(/[-T:]/g, '');

/**
 * The dynamic (point of initiation 12) Bre-B QR of a cobro: as the static one, plus the amount (54)
 * when fixed, the transaction id in the additional data (62/05) instead of a reference, and the
 * expiry in template 80 {00 = CO.BREB, 01 = UTC YYYYMMDDHHMMSS}. Tags in ascending order, CRC last.
 */
export function encodeDynamicQr(i: DynamicQrInput): string {
  if (!/^[\x20-\x7e]{1,35}$/.test(i.transactionId)) throw new Error('EMVCo transaction id must be 1-35 printable ASCII characters');
  const name = emvText(i.merchantName, 25) || 'NA';
  const city = emvText(i.merchantCity, 15) || 'BOGOTA';
  const body =
    [
      tlv('00', '01'),
      tlv('01', '12'),
      tlv(i.accountTag ?? '26', tlv('00', BREB_GUI) + tlv('01', i.keyValue)),
      tlv('52', i.mcc ?? '0000'),
      tlv('53', '170'),
      ...(i.amountCents != null ? [tlv('54', emvAmount(i.amountCents))] : []),
      tlv('58', 'CO'),
      tlv('59', name),
      tlv('60', city),
      tlv('62', tlv('05', i.transactionId)),
      tlv('80', tlv('00', BREB_GUI) + tlv('01', emvUtcStamp(i.expiresAt))),
    ].join('') + '6304';
  return body + crcHex(body);
}

export interface TlvField {
  tag: string;
  value: string;
}

/** Splits a TLV string; throws on a truncated or malformed field. */
export function parseTlv(s: string): TlvField[] {
  const out: TlvField[] = [];
  let i = 0;
  while (i < s.length) {
    const tag = s.slice(i, i + 2);
    const len = s.slice(i + 2, i + 4);
    if (!/^\d{2}$/.test(tag) || !/^\d{2}$/.test(len)) throw new Error(`malformed TLV at ${i}`);
    const n = Number(len);
    if (i + 4 + n > s.length) throw new Error(`truncated TLV field ${tag}`);
    out.push({ tag, value: s.slice(i + 4, i + 4 + n) });
    i += 4 + n;
  }
  return out;
}

export interface DecodedQr {
  fields: Record<string, string>;
  crcValid: boolean;
  keyValue: string | null;
  gui: string | null;
  reference: string | null;
  /** Tag 01: 11 static, 12 dynamic. */
  pointOfInitiation: string | null;
  /** Tag 54 as written (pesos with decimals), null when absent. */
  amount: string | null;
  /** Template 80 sub-tag 01 (GUI CO.BREB): the expiry as written (UTC YYYYMMDDHHMMSS). */
  expiry: string | null;
}

/** Parses a payload and checks its CRC (tag 63 last, over everything up to and including "6304"). */
export function decodeQr(payload: string): DecodedQr {
  const fields: Record<string, string> = {};
  for (const f of parseTlv(payload)) fields[f.tag] = f.value;
  const crcValid = payload.length >= 8 && payload.slice(-8, -4) === '6304' && crcHex(payload.slice(0, -4)) === payload.slice(-4).toUpperCase();
  let keyValue: string | null = null;
  let gui: string | null = null;
  for (let t = 26; t <= 51; t++) {
    const v = fields[String(t)];
    if (!v) continue;
    const sub = Object.fromEntries(parseTlv(v).map((f) => [f.tag, f.value]));
    if (sub['00'] === BREB_GUI) {
      gui = sub['00'];
      keyValue = sub['01'] ?? null;
      break;
    }
  }
  const additional = fields['62'] ? Object.fromEntries(parseTlv(fields['62']).map((f) => [f.tag, f.value])) : {};
  const expiryTemplate = fields['80'] ? Object.fromEntries(parseTlv(fields['80']).map((f) => [f.tag, f.value])) : {};
  return {
    fields,
    crcValid,
    keyValue,
    gui,
    reference: additional['05'] ?? null,
    pointOfInitiation: fields['01'] ?? null,
    amount: fields['54'] ?? null,
    expiry: expiryTemplate['00'] === BREB_GUI ? (expiryTemplate['01'] ?? null) : null,
  };
}
