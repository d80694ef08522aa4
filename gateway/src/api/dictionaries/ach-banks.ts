/**
 * Participants of the Colombian ACH network (ACH Colombia) with their compensation codes, as
 * published in the banks' payment-file specifications. `id` is this API's stable identifier (the
 * `bankId` of an ACH send): ids are never reused or renumbered — append new entries at the end,
 * and mark closed institutions instead of deleting them.
 */
export interface AchBank {
  id: number;
  name: string;
  achCode: string;
}

export const ACH_BANKS: readonly AchBank[] = Object.freeze(
  [
    { id: 1, name: 'Bancolombia', achCode: '1007' },
    { id: 2, name: 'Banco de Bogotá', achCode: '1001' },
    { id: 3, name: 'Banco Popular', achCode: '1002' },
    { id: 4, name: 'Banco Itaú', achCode: '1006' },
    { id: 5, name: 'Citibank Colombia', achCode: '1009' },
    { id: 6, name: 'Banco GNB Sudameris', achCode: '1012' },
    { id: 7, name: 'BBVA Colombia', achCode: '1013' },
    { id: 8, name: 'Scotiabank Colpatria', achCode: '1019' },
    { id: 9, name: 'Banco de Occidente', achCode: '1023' },
    { id: 10, name: 'Bancóldex', achCode: '1031' },
    { id: 11, name: 'Banco Caja Social', achCode: '1032' },
    { id: 12, name: 'Banco Agrario de Colombia', achCode: '1040' },
    { id: 13, name: 'Banco Mundo Mujer', achCode: '1047' },
    { id: 14, name: 'Banco Davivienda', achCode: '1051' },
    { id: 15, name: 'Banco AV Villas', achCode: '1052' },
    { id: 16, name: 'Banco W', achCode: '1053' },
    { id: 17, name: 'Bancamía', achCode: '1059' },
    { id: 18, name: 'Banco Pichincha', achCode: '1060' },
    { id: 19, name: 'Bancoomeva', achCode: '1061' },
    { id: 20, name: 'Banco Falabella', achCode: '1062' },
    { id: 21, name: 'Banco Finandina', achCode: '1063' },
    { id: 22, name: 'Banco Santander de Negocios Colombia', achCode: '1065' },
    { id: 23, name: 'Banco Cooperativo Coopcentral', achCode: '1066' },
    { id: 24, name: 'Mibanco', achCode: '1067' },
    { id: 25, name: 'Banco Serfinanza', achCode: '1069' },
    { id: 26, name: 'Lulo Bank', achCode: '1070' },
    { id: 27, name: 'Banco J.P. Morgan Colombia', achCode: '1071' },
    { id: 28, name: 'Dale', achCode: '1097' },
    { id: 29, name: 'Financiera Juriscoop', achCode: '1121' },
    { id: 30, name: 'Rappipay', achCode: '1151' },
    { id: 31, name: 'Cooperativa Financiera de Antioquia (CFA)', achCode: '1283' },
    { id: 32, name: 'Cotrafa Cooperativa Financiera', achCode: '1289' },
    { id: 33, name: 'Confiar Cooperativa Financiera', achCode: '1292' },
    { id: 34, name: 'Banco Unión', achCode: '1303' },
    { id: 35, name: 'Coltefinanciera', achCode: '1370' },
    { id: 36, name: 'Nequi', achCode: '1507' },
    { id: 37, name: 'Daviplata', achCode: '1551' },
    { id: 38, name: 'Banco Credifinanciera', achCode: '1558' },
    { id: 39, name: 'Iris', achCode: '1637' },
    { id: 40, name: 'Movii', achCode: '1801' },
    { id: 41, name: 'Ding Tecnipagos', achCode: '1802' },
    { id: 42, name: 'Powwi', achCode: '1803' },
    { id: 43, name: 'Ualá', achCode: '1804' },
    { id: 44, name: 'Nu Colombia', achCode: '1809' },
    { id: 45, name: 'Banco Itaú (antes Helm Bank)', achCode: '1014' },
  ].map((b) => Object.freeze(b)),
);

const BY_ID = new Map(ACH_BANKS.map((b) => [b.id, b]));

export function achBankById(id: number): AchBank | undefined {
  return BY_ID.get(id);
}
