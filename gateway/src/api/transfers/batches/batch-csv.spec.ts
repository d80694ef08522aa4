import { AppError } from '@wallet/platform';
import { parseBatchCsv, pesosToCents } from './batch-csv.js';
import { assertUniqueReferences, MAX_BATCH_ITEMS, toBatchItemInput, validateItems } from './batch-items.js';

const BREB_HEADER = 'amount;keyType;keyValue;targetName;targetDocument;reference';
const ACH_HEADER = 'amountCents,bankId,accountTypeId,accountNumber,documentTypeId,documentNumber,holderFirstName,holderLastName,reference';

/** Parses and validates a CSV (given as text or bytes), as the route does. */
function items(csv: string | Buffer) {
  const drafts = parseBatchCsv(Buffer.isBuffer(csv) ? csv : Buffer.from(csv, 'utf8'));
  return validateItems(drafts);
}

function refusal(fn: () => unknown): { code: string; message: string; fields: Array<{ path: string; message: string }> } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    return { code: e.code, message: e.message, fields: (e.details as { fields?: [] } | undefined)?.fields ?? [] };
  }
  throw new Error('expected a refusal');
}

describe('pesosToCents', () => {
  it('reads whole pesos and one or two decimals after a comma or a point', () => {
    expect(pesosToCents('150000')).toBe(15_000_000);
    expect(pesosToCents('150000,5')).toBe(15_000_050);
    expect(pesosToCents('150000.50')).toBe(15_000_050);
    expect(pesosToCents('0,07')).toBe(7);
  });
  it('refuses thousands separators, signs, three decimals and text', () => {
    for (const t of ['150.000', '1.500.000', '150,000,00', '-5', '+5', '10.', '1e5', 'abc', '', ' 5']) expect(pesosToCents(t)).toBeUndefined();
  });
});

describe('parseBatchCsv', () => {
  it('reads a Bre-B file with `;`, pesos with a decimal comma, into sends', () => {
    const r = items(`${BREB_HEADER}\r\n150000,5;phone;3001234567;Ana Pérez;1012345678;nómina-1\r\n2000;EMAIL;ana@example.com;Ana Pérez;;nómina-2\r\n`);
    expect(r).toEqual([
      {
        seq: 1,
        line: 2,
        send: {
          amount: 15_000_050,
          destination: { brebKey: { type: 'PHONE', value: '3001234567' } },
          targetName: 'Ana Pérez',
          targetDocument: '1012345678',
          reference: 'nómina-1',
        },
      },
      {
        seq: 2,
        line: 3,
        send: { amount: 200_000, destination: { brebKey: { type: 'EMAIL', value: 'ana@example.com' } }, targetName: 'Ana Pérez', reference: 'nómina-2' },
      },
    ]);
  });

  it('reads an ACH file with `,`, amountCents, names of account and document types (any case, accents or not)', () => {
    const r = items(
      `${ACH_HEADER}\n150000,1,Ahorros,123456789,CC,1012345678,Ana,Pérez,a\n` +
        '250000,14,depósito ELECTRONICO,99887766,pasaporte,AB12345,Luis,Gómez,b\n' +
        '350000,7,21,5555,8,900123456,Acme,S.A.S.,c\n',
    );
    expect(r.map((i) => i.send?.destination?.bankAccount)).toEqual([
      {
        bankId: 1,
        accountTypeId: 20,
        accountNumber: '123456789',
        documentTypeId: 1,
        documentNumber: '1012345678',
        holderFirstName: 'Ana',
        holderLastName: 'Pérez',
      },
      undefined, // AB12345 is not a document number of digits: an invalid item
      {
        bankId: 7,
        accountTypeId: 21,
        accountNumber: '5555',
        documentTypeId: 8,
        documentNumber: '900123456',
        holderFirstName: 'Acme',
        holderLastName: 'S.A.S.',
      },
    ]);
    expect(r[1]).toEqual({ seq: 2, line: 3, invalidMessage: 'documentNumber: Debe tener entre 5 y 15 dígitos.' });
    expect(r[0]!.send!.amount).toBe(150_000);
    // The proto item: the bank's name and ACH code come from the dictionary, as for a single send.
    expect(toBatchItemInput(r[0]!).send!.bankAccount).toMatchObject({ bankId: 1, bankName: 'Bancolombia', bankAchCode: '1007' });
    expect(toBatchItemInput(r[0]!)).toMatchObject({ seq: 1, line: 2, send: { amount: 150_000n, reference: 'a', requestHash: '' } });
  });

  it('mixes both rails in one file: keyValue makes a Bre-B row, bankId or accountNumber an ACH row', () => {
    const header = 'amount;keyType;keyValue;targetName;bankId;accountTypeId;accountNumber;documentTypeId;documentNumber;holderFirstName;holderLastName';
    const r = items(`${header}\n10;PHONE;3001234567;Ana;;;;;;;\n20;;;;1;20;12345;1;1012345678;Luis;Gómez\n`);
    expect(r[0]!.send?.destination).toEqual({ brebKey: { type: 'PHONE', value: '3001234567' } });
    expect(r[1]!.send?.destination?.bankAccount?.bankId).toBe(1);
  });

  it('drops the BOM, trims header names and cells, takes any column order and case', () => {
    const r = items(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(' KEYVALUE ; Amount ;keytype; TargetName \n 3001234567 ; 100 ; PHONE ; Ana \n')]),
    );
    expect(r).toEqual([{ seq: 1, line: 2, send: { amount: 10_000, destination: { brebKey: { type: 'PHONE', value: '3001234567' } }, targetName: 'Ana' } }]);
  });

  it('reads quoted cells: delimiters, doubled quotes and line breaks inside (the row is numbered by the line it starts on)', () => {
    const csv =
      `amount,keyType,keyValue,targetName,description\n` +
      `"1.000,50",PHONE,3001234567,"Pérez, Ana","dice ""hola"""\n` +
      `5,PHONE,3001234567,Ana,"dos\nlíneas"\n` +
      `7,PHONE,3001234567,Ana,x\n`;
    const r = items(csv);
    // "1.000,50" has a thousands separator: invalid, on line 2.
    expect(r[0]).toEqual({ seq: 1, line: 2, invalidMessage: expect.stringMatching(/^amount: Debe ser un valor en pesos/) });
    expect(r[1]).toMatchObject({ seq: 2, line: 3, send: { description: 'dos\nlíneas' } });
    expect(r[2]).toMatchObject({ seq: 3, line: 5 });
    const ok = items(`amount,keyType,keyValue,targetName,description\n"1000,50",PHONE,3001234567,"Pérez, Ana","dice ""hola"""\n`);
    expect(ok[0]!.send).toMatchObject({ amount: 100_050, targetName: 'Pérez, Ana', description: 'dice "hola"' });
  });

  it('skips blank lines (empty, spaces, or only delimiters) but counts them', () => {
    const r = items(`${BREB_HEADER}\n\n10;PHONE;3001234567;Ana;;r1\n   \n;;;;;\n\r\n20;PHONE;3001234567;Ana;;r2\n\n`);
    expect(r.map((i) => [i.seq, i.line])).toEqual([
      [1, 3],
      [2, 7],
    ]);
  });

  it('numbers CRLF files like LF files, multi-line cells included', () => {
    const r = items(`amount,keyType,keyValue,targetName,description\r\n\r\n5,PHONE,3001234567,Ana,"a\r\nb"\r\n6,PHONE,3001234567,Ana,c\r\n`);
    expect(r.map((i) => i.line)).toEqual([3, 5]);
  });

  it('turns a bad row into an invalid item with its line and Spanish messages named by column', () => {
    const r = items(`${BREB_HEADER}\n10;PHONE;3001234567;Ana;;ok\n150.000;;3001234567;;;x\n`);
    expect(r[0]!.send).toBeDefined();
    expect(r[1]).toEqual({
      seq: 2,
      line: 3,
      invalidMessage: expect.stringContaining('amount: Debe ser un valor en pesos'),
    });
    expect(r[1]!.invalidMessage).toContain('keyType: Es obligatorio para envíos Bre-B');
    // Once the row's shape is right, SendBody's own rules follow (a Bre-B send needs targetName).
    expect(items(`${BREB_HEADER}\n10;PHONE;3001234567;;;x\n`)[0]!.invalidMessage).toBe('targetName: Es obligatorio para envíos BREB.');
    expect(toBatchItemInput(r[1]!)).toEqual({ seq: 2, line: 3, invalidCode: 'INVALID_REQUEST', invalidMessage: r[1]!.invalidMessage });
  });

  it('refuses a row with both destinations or none, and a cell of the other rail', () => {
    const header = 'amount;keyType;keyValue;targetName;bankId;accountNumber;holderFirstName';
    const r = items(`${header}\n10;PHONE;3001234567;Ana;1;123;\n10;;;Ana;;;\n10;PHONE;3001234567;Ana;;;Luis\n`);
    expect(r[0]!.invalidMessage).toMatch(/^destino: La fila tiene a la vez keyValue/);
    expect(r[1]!.invalidMessage).toMatch(/^destino: La fila no indica el destino/);
    expect(r[2]!.invalidMessage).toBe('holderFirstName: No aplica a un envío Bre-B.');
  });

  it('refuses unknown account and document type names and a non-numeric amountCents or bankId', () => {
    const r = items(`${ACH_HEADER}\n15.5,x,Nómina,123456,DNI,1012345678,Ana,Pérez,a\n`);
    expect(r[0]!.invalidMessage).toContain('amountCents: Debe ser un número entero de centavos.');
    expect(r[0]!.invalidMessage).toContain('bankId: Debe ser el id de un banco');
    expect(r[0]!.invalidMessage).toContain('accountTypeId: Debe ser 20 (Ahorros), 21 (Corriente) o 22 (Depósito electrónico).');
    expect(r[0]!.invalidMessage).toContain('documentTypeId: Debe ser 1 (CC), 4 (CE), 5 (Pasaporte) u 8 (NIT).');
  });

  it('400: an unknown column, naming it; a repeated column; neither or both amount columns', () => {
    const unknown = refusal(() => parseBatchCsv(Buffer.from('amount;keyValue;monto\n1;2;3\n')));
    expect(unknown.code).toBe('INVALID_REQUEST');
    expect(unknown.message).toContain('"monto"');
    expect(unknown.fields).toEqual([{ path: 'line 1', message: 'Columna desconocida: "monto".' }]);
    expect(refusal(() => parseBatchCsv(Buffer.from('amount;amount;keyValue\n1;2;3\n'))).fields[0]!.message).toBe('La columna "amount" está repetida.');
    const none = refusal(() => parseBatchCsv(Buffer.from('keyType;keyValue\nPHONE;3001234567\n')));
    expect(none).toMatchObject({
      code: 'INVALID_REQUEST',
      fields: [{ path: 'line 1', message: expect.stringContaining('exactamente una de las columnas amount') }],
    });
    expect(refusal(() => parseBatchCsv(Buffer.from('amount;amountCents;keyValue\n1;2;3\n'))).code).toBe('INVALID_REQUEST');
  });

  it("400: not UTF-8 (e.g. a Latin-1 export), with the contract's message", () => {
    const latin1 = Buffer.concat([Buffer.from('amount;keyType;keyValue;targetName\n10;PHONE;3001234567;Ana P'), Buffer.from([0xe9]), Buffer.from('rez\n')]);
    expect(refusal(() => parseBatchCsv(latin1))).toMatchObject({ code: 'INVALID_REQUEST', message: 'El archivo no está codificado en UTF-8.' });
  });

  it('400: malformed CSV — an unclosed quote, a row with more fields than the header — naming the line', () => {
    const unclosed = refusal(() =>
      parseBatchCsv(Buffer.from(`${BREB_HEADER}\n10;PHONE;3001234567;Ana;;a\n\n20;PHONE;"3001234567;Ana;;b\n30;PHONE;1;Ana;;c\n`)),
    );
    expect(unclosed).toMatchObject({ code: 'INVALID_REQUEST', fields: [{ path: 'line 4', message: 'Hay unas comillas sin cerrar.' }] });
    const wide = refusal(() => parseBatchCsv(Buffer.from(`${BREB_HEADER}\n10;PHONE;3001234567;Ana;;a\n20;PHONE;3001234567;Ana;;b;extra\n`)));
    expect(wide).toMatchObject({ code: 'INVALID_REQUEST', fields: [{ path: 'line 3', message: 'La fila tiene más campos que el encabezado.' }] });
  });

  it('400: an empty file, or a header without rows', () => {
    expect(refusal(() => parseBatchCsv(Buffer.alloc(0))).message).toBe('El archivo está vacío.');
    expect(refusal(() => parseBatchCsv(Buffer.from('\uFEFF\n \n'))).message).toBe('El archivo está vacío.');
    expect(refusal(() => parseBatchCsv(Buffer.from(`${BREB_HEADER}\n\n;;;;;\n`)))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'El archivo no tiene filas de datos.',
    });
  });

  it('422: more than 10,000 rows; exactly 10,000 is fine', () => {
    const row = '10;PHONE;3001234567;Ana;;\n';
    expect(parseBatchCsv(Buffer.from(BREB_HEADER + '\n' + row.repeat(MAX_BATCH_ITEMS)))).toHaveLength(MAX_BATCH_ITEMS);
    const over = refusal(() => parseBatchCsv(Buffer.from(BREB_HEADER + '\n' + row.repeat(MAX_BATCH_ITEMS + 1))));
    expect(over).toMatchObject({ code: 'VALIDATION_ERROR', message: 'El lote no puede tener más de 10.000 ítems.' });
  });

  it('422: a repeated reference, naming both lines (blank lines counted)', () => {
    const drafts = parseBatchCsv(
      Buffer.from(`${BREB_HEADER}\n10;PHONE;3001234567;Ana;;nómina\n\n20;PHONE;3001234567;Ana;;otra\n30;PHONE;3001234567;Ana;; nómina \n`),
    );
    const dup = refusal(() => assertUniqueReferences(drafts));
    expect(dup.code).toBe('VALIDATION_ERROR');
    expect(dup.fields).toEqual([{ path: 'line 5', message: 'La referencia "nómina" se repite en la línea 5; apareció antes en la línea 2.' }]);
  });
});
