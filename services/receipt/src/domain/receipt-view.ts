import { createHash } from 'node:crypto';
import { canonicalJson, formatCop } from '@wallet/platform';
import type { StoredDeposit, StoredTransaction } from './records.js';

/**
 * What a receipt shows, as plain strings: the canonical content whose SHA-256 is printed on the
 * receipt (and carried in the verification QR). Built only from the read model and the company's
 * name/NIT, so a rebuilt read model gives the same hash.
 */
export interface ReceiptLine {
  label: string;
  value: string;
}
export interface ReceiptSection {
  title: string;
  lines: ReceiptLine[];
}
export interface ReceiptView {
  kind: 'TRANSACTION' | 'DEPOSIT';
  title: string;
  receiptNumber: string;
  company: { name: string; nit: string };
  status: string;
  statusLabel: string;
  /** 'ok' | 'failed' | 'pending': the status badge colour. */
  tone: 'ok' | 'failed' | 'pending';
  issuedFor: string; // the headline date (completion / confirmation, else creation)
  headline: { label: string; value: string };
  sections: ReceiptSection[];
  totals: ReceiptLine[];
  grandTotal: ReceiptLine;
  notice: string | null; // error message of a failed operation
}

export const DASH = '—';

/** A stable, short, human-friendly number derived from the id: `TRX-` / `DEP-` + 10 base-32 characters. */
export function receiptNumber(kind: 'TRANSACTION' | 'DEPOSIT', id: string): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'; // Crockford: no I, L, O, U
  const h = createHash('sha256').update(`${kind}:${id}`).digest();
  let out = '';
  for (let i = 0; i < 10; i++) out += alphabet[h[i]! % 32];
  return `${kind === 'TRANSACTION' ? 'TRX' : 'DEP'}-${out}`;
}

const MONTHS = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'];
const bogota = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Bogota',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** es-CO long date in America/Bogota: `21 de noviembre de 2026, 02:34:05 p. m. (hora de Colombia)`. */
export function formatBogota(d: Date | null): string {
  if (!d) return DASH;
  const parts = Object.fromEntries(bogota.formatToParts(d).map((p) => [p.type, p.value]));
  const h24 = Number(parts.hour) % 24;
  const h12 = h24 % 12 === 0 ? 12 : h24 % 12;
  const ampm = h24 < 12 ? 'a. m.' : 'p. m.';
  return `${Number(parts.day)} de ${MONTHS[Number(parts.month) - 1]} de ${parts.year}, ${String(h12).padStart(2, '0')}:${parts.minute}:${parts.second} ${ampm}`;
}

const cop = (v: bigint | null): string => formatCop(v ?? 0n);
const txt = (v: string | null | undefined): string => (v && v.trim() !== '' ? v.trim() : DASH);

const TRANSFER_STATUS: Record<string, { label: string; tone: ReceiptView['tone'] }> = {
  PENDING: { label: 'Pendiente', tone: 'pending' },
  AWAITING_APPROVAL: { label: 'Pendiente de aprobación', tone: 'pending' },
  EXECUTING: { label: 'En proceso', tone: 'pending' },
  COMPLETED: { label: 'Exitosa', tone: 'ok' },
  FAILED: { label: 'Fallida', tone: 'failed' },
  EXPIRED: { label: 'Vencida', tone: 'failed' },
  REVERSED: { label: 'Reversada', tone: 'failed' },
};
const DEPOSIT_STATUS: Record<string, { label: string; tone: ReceiptView['tone'] }> = {
  PENDING_CONFIRM: { label: 'Pendiente de pago', tone: 'pending' },
  ASSIGNED: { label: 'Pagado', tone: 'ok' },
  FAILED: { label: 'Fallido', tone: 'failed' },
  EXPIRED: { label: 'Vencido', tone: 'failed' },
  REVERSED: { label: 'Reversado', tone: 'failed' },
  UNASSIGNED: { label: 'Recibido sin asignar', tone: 'pending' },
};
const RAIL_LABEL: Record<string, string> = { BREB: 'Bre-B (transferencia inmediata)', ACH: 'ACH (transferencia interbancaria)', PSE: 'PSE' };
const WALLET_LABEL: Record<string, string> = { BREB: 'Billetera Bre-B', ACH: 'Billetera ACH' };

export interface CompanyRef {
  name: string;
  nit: string;
}

export function transactionView(t: StoredTransaction, company: CompanyRef): ReceiptView {
  const st = TRANSFER_STATUS[t.status ?? 'PENDING'] ?? { label: txt(t.status), tone: 'pending' as const };
  const amount = t.amount ?? 0n,
    fee = t.totalFee ?? 0n,
    iva = t.ivaAmount ?? 0n;
  const failed = st.tone === 'failed';
  const destination: ReceiptLine[] = [
    { label: 'Nombre', value: txt(t.targetName) },
    { label: 'Documento', value: txt(t.targetDocument) },
    { label: 'Banco', value: txt(t.bankName) },
  ];
  if (t.bankAccountType) destination.push({ label: 'Tipo de cuenta', value: t.bankAccountType });
  if (t.bankAccountMasked) destination.push({ label: 'Cuenta', value: t.bankAccountMasked });
  if (t.brebKey) destination.push({ label: 'Llave Bre-B', value: t.brebKey });
  // A return of a deposit to its payer (docs/returns.md): the same receipt, named for what it is.
  const isReturn = t.kind === 'RETURN';
  return {
    kind: 'TRANSACTION',
    title: isReturn ? 'Comprobante de devolución' : 'Comprobante de transferencia',
    receiptNumber: receiptNumber('TRANSACTION', t.id),
    company: { name: company.name, nit: company.nit },
    status: t.status ?? 'PENDING',
    statusLabel: st.label,
    tone: st.tone,
    issuedFor: formatBogota(t.completedAt ?? t.createdAt),
    headline: {
      label: isReturn ? (failed ? 'Valor no devuelto' : 'Valor devuelto al pagador') : failed ? 'Valor no transferido' : 'Valor transferido',
      value: cop(amount),
    },
    sections: [
      {
        title: 'Datos de la operación',
        lines: [
          { label: 'ID de la transacción', value: t.id },
          { label: 'Canal', value: RAIL_LABEL[t.rail ?? ''] ?? txt(t.rail) },
          { label: 'Fecha de creación', value: formatBogota(t.createdAt) },
          { label: failed ? 'Fecha de cierre' : 'Fecha de finalización', value: formatBogota(t.completedAt ?? (failed ? t.statusAt : null)) },
          { label: 'ID del proveedor', value: txt(t.providerTransferId) },
          { label: 'Referencia', value: txt(t.reference) },
          { label: 'Descripción', value: txt(t.description) },
        ],
      },
      {
        title: 'Origen',
        lines: [
          { label: 'Empresa', value: txt(company.name) },
          { label: 'NIT', value: txt(company.nit) },
          { label: 'Producto', value: WALLET_LABEL[t.rail ?? ''] ?? DASH },
        ],
      },
      { title: isReturn ? 'Destino (el pagador)' : 'Destino', lines: destination },
    ],
    totals: [
      { label: 'Monto', value: cop(amount) },
      { label: 'Comisión', value: cop(fee) },
      { label: 'IVA (19 %)', value: cop(iva) },
    ],
    grandTotal: { label: failed ? 'Total no debitado (liberado)' : 'Total debitado', value: cop(amount + fee + iva) },
    notice: failed
      ? t.errorMessage
        ? `Motivo: ${t.errorMessage}`
        : isReturn
          ? 'La devolución no se realizó; los fondos reservados se liberaron.'
          : 'La transferencia no se realizó; los fondos reservados se liberaron.'
      : null,
  };
}

export function depositView(d: StoredDeposit, company: CompanyRef): ReceiptView {
  const st = DEPOSIT_STATUS[d.status ?? 'PENDING_CONFIRM'] ?? { label: txt(d.status), tone: 'pending' as const };
  const amount = d.amount ?? 0n,
    fee = d.feeAmount ?? 0n,
    iva = d.ivaAmount ?? 0n;
  const net = d.netAmount ?? amount - fee - iva;
  const breb = d.source === 'BREB';
  const beneficiary: ReceiptLine[] = [
    { label: 'Empresa', value: txt(company.name) },
    { label: 'NIT', value: txt(company.nit) },
  ];
  if (breb) {
    beneficiary.push({ label: 'Llave de cobro', value: txt(d.brebKeyValue) });
    beneficiary.push({ label: 'Nombre de la llave', value: txt(d.brebKeyName) });
    if (d.brebKeyExternalId) beneficiary.push({ label: 'ID externo', value: d.brebKeyExternalId });
  }
  return {
    kind: 'DEPOSIT',
    title: 'Comprobante de recaudo',
    receiptNumber: receiptNumber('DEPOSIT', d.id),
    company: { name: company.name, nit: company.nit },
    status: d.status ?? 'PENDING_CONFIRM',
    statusLabel: st.label,
    tone: st.tone,
    issuedFor: formatBogota(d.providerConfirmedAt ?? d.createdAt),
    headline: { label: 'Valor recaudado', value: cop(amount) },
    sections: [
      {
        title: 'Datos de la operación',
        lines: [
          { label: 'ID del depósito', value: d.id },
          { label: 'Canal', value: breb ? 'Bre-B (llave de cobro)' : d.source === 'PSE' ? 'PSE (botón de pagos)' : txt(d.source) },
          { label: 'Fecha de creación', value: formatBogota(d.createdAt) },
          { label: 'Fecha de confirmación', value: formatBogota(d.providerConfirmedAt) },
          { label: 'ID del proveedor', value: txt(d.providerTransferId) },
          { label: 'Referencia', value: txt(d.internalRef) },
        ],
      },
      {
        title: 'Pagador',
        lines: [
          { label: 'Nombre', value: txt(d.payerName) },
          { label: 'Documento', value: txt(d.payerDocument) },
          { label: 'Banco', value: txt(d.payerBank) },
        ],
      },
      { title: 'Beneficiario', lines: beneficiary },
    ],
    totals: [
      { label: 'Monto recibido', value: cop(amount) },
      { label: 'Comisión', value: cop(fee) },
      { label: 'IVA (19 %)', value: cop(iva) },
    ],
    grandTotal: { label: d.status === 'ASSIGNED' || d.status === 'REVERSED' ? 'Neto acreditado' : 'Neto a acreditar', value: cop(net) },
    notice:
      d.status === 'REVERSED'
        ? 'El proveedor reversó este pago; el valor acreditado se debitó de la billetera.'
        : d.status === 'UNASSIGNED'
          ? 'El pago se recibió en una llave eliminada o suspendida y no se acreditó.'
          : d.status === 'FAILED'
            ? 'El intento de pago del pagador falló.'
            : d.status === 'EXPIRED'
              ? 'El enlace de pago venció sin recibir el pago.'
              : null,
  };
}

/**
 * The canonical form hashed for verification: keys by UTF-16 code unit, an undefined member as null
 * (the hashes printed on receipts were made so).
 */
export const receiptJson = (view: ReceiptView): string => canonicalJson(view, { undefinedAs: 'null', keyOrder: 'code-unit' });

export function receiptHash(view: ReceiptView): string {
  return createHash('sha256').update(receiptJson(view)).digest('hex');
}

/**
 * What the public verification page may show of a receipt (docs/receipts.md "Verifying a receipt"):
 * who issued it, what it is, its headline and total, its status and date. Never a party's account,
 * key, document or name: the page answers anyone holding the number and the hash, who already holds
 * the receipt, but a link can travel further than the PDF.
 */
export interface ReceiptSummary {
  title: string;
  company: CompanyRef;
  statusLabel: string;
  tone: ReceiptView['tone'];
  issuedFor: string;
  headline: ReceiptLine;
  grandTotal: ReceiptLine;
}

export function receiptSummary(view: ReceiptView): ReceiptSummary {
  return {
    title: view.title,
    company: { name: view.company.name, nit: view.company.nit },
    statusLabel: view.statusLabel,
    tone: view.tone,
    issuedFor: view.issuedFor,
    headline: { label: view.headline.label, value: view.headline.value },
    grandTotal: { label: view.grandTotal.label, value: view.grandTotal.value },
  };
}

/** A receipt number as receiptNumber() makes it. */
export const RECEIPT_NUMBER = /^(TRX|DEP)-[0-9A-HJKMNP-TV-Z]{10}$/;
