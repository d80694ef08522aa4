/** The Spanish messages of a send's refusals (shared by the single send and its destination checks). */
export const SEND_MESSAGES = {
  anchorUnknown: 'El anchorHandle no corresponde a una consulta de llave de los últimos 10 minutos; consulte la llave de nuevo.',
  anchorChanged: 'La llave ya no corresponde al anchorHandle consultado; consulte la llave de nuevo.',
  documentMismatch: 'El documento indicado no coincide con el del titular de la llave Bre-B.',
  bankNotRoutable: 'El banco de destino no está habilitado para transferencias ACH.',
  placeholderAccount: 'El número de cuenta de destino no es aceptado por las reglas internas.',
  duplicateInFlight: 'Una solicitud con la misma referencia aún está en proceso; intente de nuevo en unos segundos.',
  ledgerUnknown: 'No fue posible confirmar la reserva de fondos; la transferencia no fue aceptada. Intente de nuevo.',
  keyInFlight: 'Una solicitud con la misma clave de idempotencia aún está en proceso; intente de nuevo en unos segundos.',
};
