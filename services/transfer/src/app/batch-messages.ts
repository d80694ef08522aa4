/** The Spanish messages of bulk payouts' answers (docs/batches.md). */
export const BATCH_MESSAGES = {
  duplicateReference: (ref: string, first: number) => `La referencia "${ref}" se repite: ya la usa el ítem ${first} del lote.`,
  notExecutable: (state: string) => `El lote está en estado ${state} y no puede ejecutarse.`,
  notCancellable: (state: string) => `El lote está en estado ${state} y ya no puede cancelarse.`,
  expired: 'El lote expiró sin ejecutarse (24 horas después de validado).',
  noApproval: 'El lote no espera aprobación: solo un lote ejecutado de una empresa con múltiples firmas se firma.',
  approvalExpired: 'La aprobación del lote expiró sin alcanzar las firmas requeridas; los fondos de todos sus ítems fueron liberados.',
  rejected: (reason: string | null) =>
    `El lote fue rechazado por un firmante; los fondos de todos sus ítems fueron liberados.${reason ? ` Motivo: ${reason}` : ''}`,
  fundingAbandoned: 'La reserva de fondos del lote no se completó; ejecútelo de nuevo.',
  nothingToExecute: 'Ningún ítem del lote pasó las verificaciones al ejecutarlo.',
};
