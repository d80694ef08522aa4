/** The PSE gateway: link statuses, the banks offered on the pay page, amounts as Colombians read them. */

export type PseStatus = 'PENDING' | 'PAID' | 'FAILED' | 'REVERSED';
export type PseCallbackStatus = Exclude<PseStatus, 'PENDING'>;

/** Entities that take part in PSE (as the ACH / PSE directory names them), in the order of the picker. */
export const PSE_BANKS = [
  'Bancolombia',
  'Banco de Bogotá',
  'Davivienda',
  'BBVA Colombia',
  'Banco de Occidente',
  'Banco Popular',
  'Banco AV Villas',
  'Scotiabank Colpatria',
  'Banco Caja Social',
  'Itaú',
  'Banco Agrario',
  'Banco GNB Sudameris',
  'Banco Falabella',
  'Banco Pichincha',
  'Bancoomeva',
  'Banco Finandina',
  'Banco Serfinanza',
  'Banco Mundo Mujer',
  'Banco W',
  'Confiar Cooperativa Financiera',
  'Nequi',
  'Daviplata',
  'Lulo Bank',
  'Nu Colombia',
  'Dale',
  'Movii',
  'Rappipay',
] as const;

export function isPseBank(name: string): boolean {
  return (PSE_BANKS as readonly string[]).includes(name);
}

/** Integer centavos → `$ 1.234.567,89` (es-CO); bigint arithmetic only, no floats. */
export function formatCop(amountCents: bigint): string {
  const negative = amountCents < 0n;
  const abs = negative ? -amountCents : amountCents;
  const pesos = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  const cents = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}$ ${pesos},${cents}`;
}

export interface PseCallbackBody {
  eventId: string;
  depositId: string;
  providerTransferId: string;
  status: PseCallbackStatus;
  payerBank?: string;
  paidAt?: string;
  occurredAt: string;
}
