// Display formats of the dashboard: pesos in the es-CO convention, times in Colombia.

/**
 * Integer centavos → `$ 1.234.567,89`. Exact (BigInt, no float division) and grouped by hand like
 * platform's formatCop: Intl's es-CO output varies between ICU versions (no grouping below 10.000,
 * COP shown without decimals).
 */
export function formatCop(centavos: number | string | bigint): string {
  let cents: bigint;
  try {
    cents = BigInt(centavos);
  } catch {
    return String(centavos);
  }
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  const pesos = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  const frac = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}$ ${pesos},${frac}`;
}

const dateTime = new Intl.DateTimeFormat('es-CO', { timeZone: 'America/Bogota', dateStyle: 'medium', timeStyle: 'short' });

/** ISO instant → `21 nov 2026, 3:22 p. m.` in America/Bogota; '—' when absent or unreadable. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '—' : dateTime.format(t);
}

export const RAIL_LABEL: Record<string, string> = { BREB: 'Bre-B', ACH: 'ACH' };

export const ROLE_LABEL: Record<string, string> = { ADMIN: 'Administrador', OPERATOR: 'Operador', VIEWER: 'Consulta' };

export const APPROVAL_STATUS_LABEL: Record<string, string> = {
  PENDING: 'Pendiente',
  APPROVED: 'Aprobada',
  REJECTED: 'Rechazada',
  EXPIRED: 'Vencida',
};

export const TRANSACTION_STATUS_LABEL: Record<string, string> = {
  AWAITING_APPROVAL: 'Esperando firmas',
  EXECUTING: 'En ejecución',
  PENDING: 'En proceso',
  PROCESSING: 'En proceso',
  COMPLETED: 'Completada',
  FAILED: 'Fallida',
  REJECTED: 'Rechazada',
  EXPIRED: 'Vencida',
  CANCELLED: 'Cancelada',
};

export const BATCH_STATUS_LABEL: Record<string, string> = {
  VALIDATED: 'Validado',
  REJECTED: 'Rechazado',
  AWAITING_APPROVAL: 'Esperando firmas',
  EXECUTING: 'En ejecución',
  COMPLETED: 'Completado',
  PARTIALLY_FAILED: 'Con pagos fallidos',
  FAILED: 'Fallido',
  EXPIRED: 'Vencido',
  CANCELLED: 'Cancelado',
};

/** A line of a batch: its own statuses before execution, then its transfer's. */
export const BATCH_ITEM_STATUS_LABEL: Record<string, string> = {
  ...TRANSACTION_STATUS_LABEL,
  VALID: 'Válido',
  INVALID: 'Inválido',
  NOT_EXECUTED: 'No ejecutado',
};

export const COBRO_STATUS_LABEL: Record<string, string> = {
  OPEN: 'Abierto',
  PARTIALLY_PAID: 'Pagado en parte',
  PAID: 'Pagado',
  EXPIRED: 'Vencido',
  CANCELLED: 'Cancelado',
};

export const COBRO_METHOD_LABEL: Record<string, string> = { BREB_QR: 'QR Bre-B', BREB_KEY: 'Llave Bre-B', PSE: 'PSE' };

/** How a payment found its cobro (docs/cobros.md, "How payments are matched"). */
export const MATCHED_BY_LABEL: Record<string, string> = {
  TRANSACTION_ID: 'Por el QR (id de transacción)',
  DYNAMIC_KEY: 'Por la llave del cobro',
  PSE_LINK: 'Por el enlace PSE del cobro',
  REFERENCE: 'Por la referencia',
  PAYER_RULE: 'Por el pagador esperado',
  MANUAL: 'A mano',
};

export const DISPOSITION_LABEL: Record<string, string> = {
  COUNTED: 'Cuenta para el cobro',
  EXCESS: 'Excedente (el cobro ya estaba pagado)',
  HELD_FOR_REVIEW: 'Retenido para revisión',
};

export const UNMATCHED_REASON_LABEL: Record<string, string> = {
  NO_MATCH: 'Ningún cobro coincide',
  COBRO_EXPIRED: 'Su cobro ya había vencido',
  COBRO_CANCELLED: 'Su cobro estaba cancelado',
};

/** Why a payment goes back to its payer (docs/returns.md). */
export const RETURN_REASON_LABEL: Record<string, string> = {
  CUSTOMER_REQUEST: 'Lo pidió el cliente',
  DUPLICATE: 'Pago duplicado',
  OVERPAYMENT: 'Pagó de más',
  FRAUD: 'Fraude',
  OTHER: 'Otro motivo',
};

export const RETURN_STATUS_LABEL: Record<string, string> = { PENDING: 'En proceso', RETURNED: 'Devuelta al pagador', FAILED: 'Fallida' };

/**
 * Pesos as a person types them (`30.000`, `30000,50`, `$ 1.234.567,89`) → integer centavos; undefined
 * when it is not such an amount. es-CO: `.` groups thousands, `,` starts the centavos.
 */
export function parsePesos(text: string): number | undefined {
  const t = text.replace(/[$\s\u00a0]/g, '');
  const m = /^(\d{1,3}(?:\.\d{3})+|\d+)(?:,(\d{1,2}))?$/.exec(t);
  if (!m) return undefined;
  const cents = BigInt(m[1]!.replace(/\./g, '')) * 100n + BigInt((m[2] ?? '0').padEnd(2, '0'));
  return cents <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(cents) : undefined;
}

export const SCHEDULE_STATUS_LABEL: Record<string, string> = { ACTIVE: 'Activo', PAUSED: 'En pausa', CANCELLED: 'Cancelado', COMPLETED: 'Terminado' };

export const SCHEDULE_RUN_STATUS_LABEL: Record<string, string> = { STARTING: 'Iniciando', STARTED: 'Iniciada', FAILED: 'Fallida', SKIPPED: 'Omitida' };

export const ALERT_STATE_LABEL: Record<string, string> = { NORMAL: 'Normal', LOW: 'Saldo bajo', HIGH: 'Saldo alto' };

/** What a crossing was (docs/balance-alerts.md). */
export const ALERT_KIND_LABEL: Record<string, string> = {
  LOW: 'Bajó del umbral bajo',
  RECOVERED: 'Se recuperó',
  HIGH: 'Superó el umbral alto',
  NORMAL: 'Volvió a lo normal',
};

/** A label from one of the tables above, or the raw code when the API sends a new one. */
export const label = (table: Record<string, string>, code: string | null | undefined): string => (code ? (table[code] ?? code) : '—');
