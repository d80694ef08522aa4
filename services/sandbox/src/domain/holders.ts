import { createHash } from 'node:crypto';
import { detectKeyType } from './keys.js';

/**
 * The holder behind a directory key, derived deterministically from the normalized key value:
 * the same key always resolves to the same person, anchor handle and bank, across restarts and
 * across sandbox instances, with nothing stored. Names are upper-case ASCII, as Colombian bank
 * cores print them.
 */

export type IdType = 'CC' | 'CE' | 'NIT';
export type BankAccountType = 'Ahorros' | 'Corriente';

export interface Holder {
  firstName: string;
  lastName: string;
  idType: IdType;
  idValue: string;
  bankName: string;
  bankAccountType: BankAccountType;
}

const GIVEN_MALE = [
  'JUAN',
  'CARLOS',
  'ANDRES',
  'LUIS',
  'JORGE',
  'DIEGO',
  'ALEJANDRO',
  'SEBASTIAN',
  'SANTIAGO',
  'DANIEL',
  'FELIPE',
  'CAMILO',
  'DAVID',
  'JOSE',
  'MIGUEL',
  'JULIAN',
  'OSCAR',
  'MAURICIO',
  'RICARDO',
  'FERNANDO',
  'NICOLAS',
  'ESTEBAN',
  'MATEO',
  'SAMUEL',
  'HERNAN',
  'GUSTAVO',
  'JAVIER',
  'EDUARDO',
  'CRISTIAN',
  'JAIME',
];
const GIVEN_FEMALE = [
  'MARIA',
  'ANA',
  'LAURA',
  'CAROLINA',
  'PAULA',
  'ANDREA',
  'VALENTINA',
  'DANIELA',
  'CATALINA',
  'NATALIA',
  'DIANA',
  'SANDRA',
  'CLAUDIA',
  'MONICA',
  'ALEJANDRA',
  'JULIANA',
  'LINA',
  'ISABELLA',
  'SOFIA',
  'MARCELA',
  'LUZ',
  'GLORIA',
  'ANGELA',
  'MARIANA',
  'LUISA',
  'VALERIA',
  'SARA',
  'GABRIELA',
  'ADRIANA',
  'FERNANDA',
];
const SURNAMES = [
  'RODRIGUEZ',
  'GOMEZ',
  'GONZALEZ',
  'MARTINEZ',
  'GARCIA',
  'LOPEZ',
  'HERNANDEZ',
  'SANCHEZ',
  'RAMIREZ',
  'PEREZ',
  'DIAZ',
  'MUNOZ',
  'ROJAS',
  'MORENO',
  'JIMENEZ',
  'VARGAS',
  'CASTRO',
  'GUTIERREZ',
  'ALVAREZ',
  'RUIZ',
  'SUAREZ',
  'TORRES',
  'ROMERO',
  'RESTREPO',
  'OSORIO',
  'CARDENAS',
  'MEJIA',
  'OSPINA',
  'VALENCIA',
  'CASTILLO',
  'QUINTERO',
  'GIRALDO',
  'ARIAS',
  'HERRERA',
  'MEDINA',
  'AGUDELO',
  'CORREA',
  'ORTIZ',
  'SALAZAR',
  'PARRA',
  'ZAPATA',
  'BETANCUR',
  'CARDONA',
  'MARIN',
  'VELASQUEZ',
  'RIOS',
  'LONDONO',
  'ACOSTA',
  'BERNAL',
  'DUQUE',
];
/** Bre-B participants; the names match the ACH dictionary of the product. */
const BANKS = [
  'Bancolombia',
  'Banco de Bogotá',
  'Banco Davivienda',
  'BBVA Colombia',
  'Banco de Occidente',
  'Banco Popular',
  'Banco AV Villas',
  'Scotiabank Colpatria',
  'Banco Caja Social',
  'Banco Agrario de Colombia',
  'Nequi',
  'Daviplata',
  'Banco Falabella',
  'Banco Itaú',
  'Banco GNB Sudameris',
  'Banco Pichincha',
  'Bancoomeva',
  'Lulo Bank',
  'Nu Colombia',
  'Dale',
];
/** Wallets (low-value deposits) only have savings-like accounts. */
const SAVINGS_ONLY = new Set(['Nequi', 'Daviplata', 'Dale', 'Nu Colombia', 'Lulo Bank']);

/** A stream of deterministic numbers from a hash of the key. */
class Draw {
  private offset = 0;
  constructor(private readonly bytes: Buffer) {}
  next(): number {
    const v = this.bytes.readUInt32BE(this.offset);
    this.offset = (this.offset + 4) % (this.bytes.length - 3);
    return v;
  }
  pick<T>(list: readonly T[]): T {
    return list[this.next() % list.length]!;
  }
}

function digest(label: string, normalized: string, algorithm = 'sha256'): Buffer {
  return createHash(algorithm).update(`${label}:${normalized}`).digest();
}

/** `anh_<hash>`: the directory's stable handle for the key (the rail checks it against the key). */
export function anchorHandleFor(normalized: string): string {
  return `anh_${digest('anchor', normalized).toString('hex').slice(0, 24)}`;
}

export function holderFor(normalized: string): Holder {
  const d = new Draw(digest('holder', normalized, 'sha512'));
  const given = d.next() % 2 === 0 ? GIVEN_MALE : GIVEN_FEMALE;
  const first = d.pick(given);
  const second = d.pick(given);
  const twoNames = d.next() % 2 === 0 && second !== first;
  const firstName = twoNames ? `${first} ${second}` : first;
  const lastName = `${d.pick(SURNAMES)} ${d.pick(SURNAMES)}`;

  // A document-number key (NRIC) is the holder's own cédula; otherwise a CC of 8 digits (the
  // older series) or 10 digits (issued since 2004, starting with 10 or 11).
  let idValue: string;
  if (detectKeyType(normalized) === 'NRIC') {
    idValue = normalized;
  } else {
    const length = d.next() % 2 === 0 ? 8 : 10;
    const head = length === 10 ? `1${d.next() % 2}` : String(1 + (d.next() % 9));
    let rest = '';
    while (head.length + rest.length < length) rest += String(d.next() % 10);
    idValue = head + rest;
  }

  const bankName = d.pick(BANKS);
  const bankAccountType: BankAccountType = SAVINGS_ONLY.has(bankName) || d.next() % 4 !== 0 ? 'Ahorros' : 'Corriente';
  return { firstName, lastName, idType: 'CC', idValue, bankName, bankAccountType };
}
