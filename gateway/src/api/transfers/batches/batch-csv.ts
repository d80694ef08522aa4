import { parse, CsvError } from 'csv-parse/sync';
import { invalidRequest, type FieldProblem } from '@wallet/platform';
import { MAX_BATCH_ITEMS, tooManyItems, type BatchItemDraft } from './batch-items.js';

/**
 * A batch as a CSV file (docs/batches.md): UTF-8 (BOM optional), `,` or `;` (whichever the header
 * line uses more), a header of the columns below (case-insensitive, any order, spaces trimmed), one
 * send per row. Each row becomes a SendBody-shaped draft; its shape is checked afterwards with the
 * same schema as JSON items (batch-items.ts). Line numbers are the file's (header = 1; blank lines
 * are skipped but counted; a row with a multi-line quoted field is numbered by the line it starts on).
 */

const COLUMNS = [
  'amount',
  'amountCents',
  'keyType',
  'keyValue',
  'targetName',
  'targetDocument',
  'bankId',
  'accountTypeId',
  'accountNumber',
  'documentTypeId',
  'documentNumber',
  'holderFirstName',
  'holderLastName',
  'reference',
  'description',
] as const;
type Column = (typeof COLUMNS)[number];
const BY_LOWER = new Map<string, Column>(COLUMNS.map((c) => [c.toLowerCase(), c]));

/** Columns that only make sense for one rail (the common ones — amount, targetName, targetDocument, reference, description — go with both). */
const BREB_ONLY: readonly Column[] = ['keyType'];
const ACH_ONLY: readonly Column[] = ['accountTypeId', 'documentTypeId', 'documentNumber', 'holderFirstName', 'holderLastName'];

/**
 * The document's example file: the same four sends as the JSON example (sandbox keys and holders as the
 * directory answers them, and the sandbox's ACH account), as Excel in Colombia saves it (`;`, pesos with a
 * decimal comma). test/e2e/documented-examples.test.ts sends it and needs every line valid.
 */
export const BATCH_CSV_EXAMPLE = [
  'amount;keyType;keyValue;targetName;targetDocument;bankId;accountTypeId;accountNumber;documentTypeId;documentNumber;holderFirstName;holderLastName;reference;description',
  '123456,78;PHONE;3001230001;ANDRES DAVID MEJIA LONDONO;1117773321;;;;;;;;NOM-0001;Nómina',
  '25000;PHONE;3001230002;DIEGO SANCHEZ CORREA;1112631916;;;;;;;;NOM-0002;Nómina',
  '70000;;;;;1;Ahorros;18306581010;CC;1020304050;Carlos;Rodríguez;NOM-0003;Proveedores',
  '1500,50;;;;;1;Ahorros;18306581010;CC;1020304050;Carlos;Rodríguez;NOM-0004;Proveedores',
  '',
].join('\r\n');

/** Documented in the OpenAPI document (the request's text/csv content). */
export const BATCH_CSV_DESCRIPTION = [
  'A CSV file (UTF-8, BOM optional), `,` or `;` as the header line uses; header required, names case-insensitive, any order.',
  'Columns: `amount` (pesos: `150000`, `150000,5`, `150000.50`; no thousands separators) or `amountCents` (integer centavos) — exactly one of the two;',
  'Bre-B: `keyType` (PHONE | EMAIL | ALPHANUM | NRIC, required), `keyValue`, `targetName`, `targetDocument`;',
  'ACH: `bankId` (GET /dictionaries/banks/ach), `accountTypeId` (20 | 21 | 22 or Ahorros | Corriente | Depósito electrónico),',
  '`accountNumber`, `documentTypeId` (1 | 4 | 5 | 8 or CC | CE | PA | PASAPORTE | NIT), `documentNumber`, `holderFirstName`, `holderLastName`;',
  'common: `reference`, `description`. A row with `keyValue` is a Bre-B send, with `bankId` or `accountNumber` an ACH send.',
  'Batch fields go in the query string (`reference`, `description`, `mode`). A row that is not a valid send is an invalid item with its line',
  '(header = line 1; blank lines are skipped but counted). Unknown column, malformed CSV, not UTF-8 or no rows → 400; more than 10,000 rows → 422.',
].join(' ');

const ACCOUNT_TYPES: Record<string, 20 | 21 | 22> = { '20': 20, '21': 21, '22': 22, ahorros: 20, corriente: 21, 'deposito electronico': 22 };
const DOCUMENT_TYPES: Record<string, 1 | 4 | 5 | 8> = { '1': 1, '4': 4, '5': 5, '8': 8, cc: 1, ce: 4, pa: 5, pasaporte: 5, nit: 8 };

/** Case-, accent- and spacing-insensitive form of a name (`Depósito  Electrónico` → `deposito electronico`). */
function fold(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
    .trim()
    .replace(/\s+/g, ' ');
}

/** `150000`, `150000,5`, `150000.50` → centavos; undefined when the text is not such an amount. */
export function pesosToCents(text: string): number | undefined {
  const m = /^(\d+)(?:[.,](\d{1,2}))?$/.exec(text);
  if (!m) return undefined;
  const cents = BigInt(m[1]!) * 100n + BigInt((m[2] ?? '0').padEnd(2, '0'));
  return Number(cents); // above 2^53 it loses digits, but SendBody refuses it anyway
}

const lineProblem = (line: number, message: string) => invalidRequest([{ path: `line ${line}`, message }], message);

/** The field delimiter, from the header line: `;` when it has more of them than `,`. */
function delimiterOf(text: string): ',' | ';' {
  const header = text.split('\n', 1)[0] ?? '';
  const count = (c: string) => header.split(c).length - 1;
  return count(';') > count(',') ? ';' : ',';
}

/** Parses a batch CSV into drafts, one per data row, or throws 400 INVALID_REQUEST / 422 VALIDATION_ERROR. */
export function parseBatchCsv(raw: Buffer): BatchItemDraft[] {
  let text: string;
  try {
    // fatal: bytes that are not UTF-8 are refused, never replaced; the BOM, if any, is dropped.
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw invalidRequest([{ path: '', message: 'El archivo no está codificado en UTF-8.' }], 'El archivo no está codificado en UTF-8.');
  }
  // One line end, so that line numbers are counted the same for CRLF, LF and CR files.
  text = text.replace(/\r\n?/g, '\n');
  if (text.trim() === '') throw invalidRequest([{ path: '', message: 'El archivo está vacío.' }], 'El archivo está vacío.');
  if (text.includes('\u0000')) throw invalidRequest([{ path: '', message: 'El archivo no puede contener el carácter nulo (U+0000).' }]);
  const delimiter = delimiterOf(text.replace(/^\s*\n/, ''));

  let records: Array<{ record: string[]; info: { lines: number } }>;
  let lastLine = 0;
  try {
    records = parse(text, {
      delimiter,
      info: true,
      skip_empty_lines: true,
      relax_quotes: true,
      relax_column_count_less: true,
      on_record: (record: string[], context: { lines: number }) => {
        lastLine = context.lines;
        return record;
      },
    }) as unknown as Array<{ record: string[]; info: { lines: number } }>;
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    throw csvProblem(err, text, lastLine);
  }
  const rows = records
    .map((r) => ({ cells: r.record.map((c) => c.trim()), line: startLine(r.info.lines, r.record) }))
    .filter((r) => r.cells.some((c) => c !== '')); // a row of empty cells (`;;;`) is a blank line too
  const header = rows.shift();
  if (!header) throw invalidRequest([{ path: '', message: 'El archivo está vacío.' }], 'El archivo está vacío.');
  const columns = headerColumns(header.cells, header.line);
  if (rows.length === 0) throw invalidRequest([{ path: '', message: 'El archivo no tiene filas de datos.' }], 'El archivo no tiene filas de datos.');
  if (rows.length > MAX_BATCH_ITEMS) throw tooManyItems();
  // Which amount column the file uses, and how its paths read, are the file's: decided once, not per row.
  const amountColumn = columns.includes('amount') ? 'amount' : 'amountCents';
  const label = labelFor(amountColumn);
  return rows.map((r) => rowDraft(columns, amountColumn, label, r.cells, r.line));
}

/** The line a record starts on: csv-parse counts the line it ends on; its quoted fields hold the line ends in between. */
function startLine(endLine: number, record: readonly string[]): number {
  let inside = 0;
  for (const c of record) for (const ch of c) if (ch === '\n') inside += 1;
  return endLine - inside;
}

function csvProblem(err: CsvError, text: string, lastLine: number): Error {
  const e = err as CsvError & { lines?: number; record?: string[] };
  if (err.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH') {
    const line = startLine(e.lines ?? 0, e.record ?? []);
    return lineProblem(line, 'La fila tiene más campos que el encabezado.');
  }
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
    // The unclosed record starts on the first non-blank line after the last complete one.
    const lines = text.split('\n');
    let line = lastLine + 1;
    while (line <= lines.length && lines[line - 1]!.trim() === '') line += 1;
    return lineProblem(line, 'Hay unas comillas sin cerrar.');
  }
  return lineProblem(e.lines ?? lastLine + 1, 'El CSV está mal formado (revise las comillas y los separadores).');
}

function headerColumns(cells: readonly string[], line: number): Array<Column | undefined> {
  const problems: FieldProblem[] = [];
  const seen = new Set<Column>();
  const columns = cells.map((name) => {
    const col = BY_LOWER.get(name.toLowerCase());
    if (!col) {
      problems.push({ path: `line ${line}`, message: name === '' ? 'Hay una columna sin nombre en el encabezado.' : `Columna desconocida: "${name}".` });
      return undefined;
    }
    if (seen.has(col)) problems.push({ path: `line ${line}`, message: `La columna "${col}" está repetida.` });
    seen.add(col);
    return col;
  });
  if (seen.has('amount') === seen.has('amountCents')) {
    problems.push({ path: `line ${line}`, message: 'El encabezado debe tener exactamente una de las columnas amount (pesos) o amountCents (centavos).' });
  }
  if (problems.length > 0) {
    const unknown = cells.filter((n, i) => columns[i] === undefined && n !== '');
    const message = unknown.length
      ? `Columna${unknown.length > 1 ? 's' : ''} desconocida${unknown.length > 1 ? 's' : ''}: ${unknown.map((n) => `"${n}"`).join(', ')}. Columnas válidas: ${COLUMNS.join(', ')}.`
      : problems[0]!.message;
    throw invalidRequest(problems, message);
  }
  return columns;
}

/** SendBody paths → the CSV column a client sees. */
function labelFor(amountColumn: 'amount' | 'amountCents') {
  return (path: string): string | undefined => {
    if (path === 'amount') return amountColumn;
    if (path === 'destination.brebKey.type') return 'keyType';
    if (path === 'destination.brebKey.value') return 'keyValue';
    if (path.startsWith('destination.bankAccount.')) return path.slice('destination.bankAccount.'.length);
    if (path === 'destination' || path === 'destination.brebKey' || path === 'destination.bankAccount') return 'destino';
    return undefined;
  };
}

function rowDraft(
  columns: ReadonlyArray<Column | undefined>,
  amountColumn: 'amount' | 'amountCents',
  label: (path: string) => string | undefined,
  cells: readonly string[],
  line: number,
): BatchItemDraft {
  const v: Partial<Record<Column, string>> = {};
  columns.forEach((c, i) => {
    const cell = cells[i] ?? '';
    if (c && cell !== '') v[c] = cell;
  });
  const problems: FieldProblem[] = [];
  const input: Record<string, unknown> = {};

  const amountText = v[amountColumn];
  if (amountText === undefined) problems.push({ path: 'amount', message: 'Es obligatorio.' });
  else if (amountColumn === 'amount') {
    const cents = pesosToCents(amountText);
    if (cents === undefined)
      problems.push({
        path: 'amount',
        message: 'Debe ser un valor en pesos sin separadores de miles, con hasta 2 decimales tras "," o "." (p. ej. 150000 o 150000,50).',
      });
    else input.amount = cents;
  } else if (!/^\d+$/.test(amountText)) problems.push({ path: 'amount', message: 'Debe ser un número entero de centavos.' });
  else input.amount = Number(amountText);

  if (v.targetName !== undefined) input.targetName = v.targetName;
  if (v.targetDocument !== undefined) input.targetDocument = v.targetDocument;
  if (v.reference !== undefined) input.reference = v.reference;
  if (v.description !== undefined) input.description = v.description;

  const breb = v.keyValue !== undefined;
  const ach = v.bankId !== undefined || v.accountNumber !== undefined;
  if (breb && ach) {
    problems.push({ path: 'destination', message: 'La fila tiene a la vez keyValue (Bre-B) y bankId/accountNumber (ACH); indique solo uno.' });
  } else if (!breb && !ach) {
    problems.push({ path: 'destination', message: 'La fila no indica el destino: keyValue (Bre-B) o bankId y accountNumber (ACH).' });
  } else if (breb) {
    if (v.keyType === undefined)
      problems.push({ path: 'destination.brebKey.type', message: 'Es obligatorio para envíos Bre-B: PHONE, EMAIL, ALPHANUM o NRIC.' });
    input.destination = { brebKey: { type: v.keyType?.toUpperCase(), value: v.keyValue } };
    for (const c of ACH_ONLY) if (v[c] !== undefined) problems.push({ path: c, message: 'No aplica a un envío Bre-B.' });
  } else {
    const bankAccount: Record<string, unknown> = {};
    if (v.bankId !== undefined) {
      if (/^\d+$/.test(v.bankId)) bankAccount.bankId = Number(v.bankId);
      else problems.push({ path: 'destination.bankAccount.bankId', message: 'Debe ser el id de un banco de GET /dictionaries/banks/ach.' });
    }
    if (v.accountTypeId !== undefined) {
      const t = ACCOUNT_TYPES[fold(v.accountTypeId)];
      if (t === undefined)
        problems.push({ path: 'destination.bankAccount.accountTypeId', message: 'Debe ser 20 (Ahorros), 21 (Corriente) o 22 (Depósito electrónico).' });
      else bankAccount.accountTypeId = t;
    }
    if (v.documentTypeId !== undefined) {
      const t = DOCUMENT_TYPES[fold(v.documentTypeId)];
      if (t === undefined) problems.push({ path: 'destination.bankAccount.documentTypeId', message: 'Debe ser 1 (CC), 4 (CE), 5 (Pasaporte) u 8 (NIT).' });
      else bankAccount.documentTypeId = t;
    }
    for (const c of ['accountNumber', 'documentNumber', 'holderFirstName', 'holderLastName'] as const) if (v[c] !== undefined) bankAccount[c] = v[c];
    input.destination = { bankAccount };
    for (const c of BREB_ONLY) if (v[c] !== undefined) problems.push({ path: c, message: 'No aplica a un envío ACH.' });
  }
  return { line, input, problems, label };
}
