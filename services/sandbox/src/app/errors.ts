/** A provider error answer: HTTP status, machine code and a Spanish message, like the real providers send. */
export class ProviderError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export const directoryDown = () => new ProviderError(503, 'SERVICE_UNAVAILABLE', 'El directorio Bre-B no está disponible.');
export const railDown = (rail: 'Bre-B' | 'ACH') => new ProviderError(503, 'SERVICE_UNAVAILABLE', `La red ${rail} no está disponible.`);
export const transferNotFound = () => new ProviderError(404, 'TRANSFER_NOT_FOUND', 'No existe una transferencia con ese transactionId.');
