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

/** A label from one of the tables above, or the raw code when the API sends a new one. */
export const label = (table: Record<string, string>, code: string | null | undefined): string => (code ? (table[code] ?? code) : '—');
