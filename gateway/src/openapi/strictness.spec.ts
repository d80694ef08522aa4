import { composeInertApp } from './served-document.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { AppError } from '@wallet/platform';
import { parseOrThrow } from '../http/validation.js';
import { SendBody } from '../api/transfers/schemas.js';
import { CreateCounterpartyBody, UpdateCounterpartyBody } from '../api/counterparties/schemas.js';
import { CreateCollectKeyBody } from '../api/collect-keys/collect-keys.routes.js';
import { TransactionsQuery } from '../api/wallets/transactions.routes.js';
import { CreateWalletMoveBody } from '../api/wallets/schemas.js';
import { CreatePseDepositBody } from '../api/deposits/deposits.routes.js';
import { FeeBody } from '../api/admin/ledger/ledger.routes.js';
import { PatchCompanyBody } from '../api/admin/companies/companies.routes.js';

// The served document states what the server enforces: a request the document calls valid is one
// the validation layer takes, and one it calls invalid is refused. These checks fail if a rule is
// left to prose again (a bare string status, an integer with no bound, a date with no format…).

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, any>;

describe('the OpenAPI document is as strict as the server', () => {
  const gw = composeInertApp();
  afterAll(() => gw.close());
  const doc = JSON.parse(JSON.stringify(gw.openApiDocument())) as Json;
  const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false, validateFormats: true, multipleOfPrecision: 6 }));
  ajv.addSchema({ ...doc, $id: 'https://wallet.test/openapi.json' });
  const validatorOf = (pointer: string) => ajv.getSchema(`https://wallet.test/openapi.json#${pointer}`)!;
  const accepts = (schema: unknown, value: unknown): boolean => {
    try {
      parseOrThrow(schema as never, value);
      return true;
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('INVALID_REQUEST');
      return false;
    }
  };

  /** Every schema node reachable from the document, with where it is. */
  function* nodes(node: unknown, at: string): Generator<[Json, string]> {
    if (Array.isArray(node)) {
      for (const [i, n] of node.entries()) yield* nodes(n, `${at}/${i}`);
      return;
    }
    if (!node || typeof node !== 'object') return;
    yield [node as Json, at];
    for (const [k, v] of Object.entries(node)) yield* nodes(v, `${at}/${k}`);
  }
  const operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
  );

  describe('POST /transfers/send: exactly one destination, targetName for BREB (oneOf of three closed variants)', () => {
    const validate = validatorOf('/components/schemas/SendTransferRequest');
    const key = { brebKey: { type: 'PHONE', value: '3001234567' } };
    const cpty = 'cpty_0123456789abcdefghijklmn';
    const account = {
      bankAccount: {
        bankId: 7,
        accountTypeId: 20,
        accountNumber: '123456789',
        documentTypeId: 1,
        documentNumber: '1020304050',
        holderFirstName: 'Ana',
        holderLastName: 'Pérez',
      },
    };
    const valid: Array<[string, Json]> = [
      ['BREB to a key', { amount: 100, destination: key, targetName: 'ANA PÉREZ', targetDocument: '1020304050' }],
      ['BREB to a key, no document', { amount: 150_000, destination: key, targetName: 'Ana' }],
      ['BREB to a resolved key', { amount: 1_200_000_000, targetAnchorHandle: 'anc_0123abcd', targetName: 'Ana', reference: 'r-1' }],
      ['ACH', { amount: 200_000_000_000, destination: account }],
      ['ACH with its document', { amount: 5_000, destination: account, targetName: 'Ana Pérez', targetDocument: '1020304050', description: '' }],
      ['to a counterparty', { amount: 5_000, counterpartyId: cpty, reference: 'r-2' }],
    ];
    const invalid: Array<[string, Json]> = [
      ['no destination', { amount: 100, targetName: 'Ana' }],
      ['counterparty and destination', { amount: 100, counterpartyId: cpty, destination: account }],
      ['counterparty and anchor', { amount: 100, counterpartyId: cpty, targetAnchorHandle: 'anc_1', targetName: 'Ana' }],
      ['malformed counterparty id', { amount: 100, counterpartyId: 'cpty_SHORT' }],
      ['counterparty id not a string', { amount: 100, counterpartyId: 12 }],
      ['both destination and anchor', { amount: 100, destination: key, targetAnchorHandle: 'anc_1', targetName: 'Ana' }],
      ['both brebKey and bankAccount', { amount: 100, destination: { ...key, ...account }, targetName: 'Ana' }],
      ['empty destination', { amount: 100, destination: {}, targetName: 'Ana' }],
      ['BREB without targetName', { amount: 100, destination: key }],
      ['anchor without targetName', { amount: 100, targetAnchorHandle: 'anc_1' }],
      ['anchor with a space', { amount: 100, targetAnchorHandle: 'anc 1', targetName: 'Ana' }],
      ['BREB document of 2 characters', { amount: 100, destination: key, targetName: 'Ana', targetDocument: '12' }],
      ['amount under 100', { amount: 99, destination: account }],
      ['amount not an integer', { amount: 100.5, destination: account }],
      ['amount as a string', { amount: '100', destination: account }],
      ['unknown field', { amount: 100, destination: account, memo: 'x' }],
      ['key value too short', { amount: 100, destination: { brebKey: { type: 'PHONE', value: '30' } }, targetName: 'Ana' }],
      ['bad account type', { amount: 100, destination: { bankAccount: { ...account.bankAccount, accountTypeId: 23 } } }],
    ];
    it.each(valid)('%s: valid per the document and accepted', (_name, body) => {
      expect(validate(body)).toBe(true);
      expect(accepts(SendBody, body)).toBe(true);
    });
    it.each(invalid)('%s: invalid per the document and refused', (_name, body) => {
      expect(validate(body)).toBe(false);
      expect(accepts(SendBody, body)).toBe(false);
    });
    it('keeps the Spanish messages and paths of the rules', () => {
      const fields = (body: Json) => {
        try {
          parseOrThrow(SendBody, body);
        } catch (err) {
          return ((err as AppError).details as { fields: Array<{ path: string; message: string }> }).fields;
        }
        return [];
      };
      expect(fields({ amount: 100, targetName: 'Ana' })).toEqual([
        { path: 'destination', message: 'Debe indicar destination, targetAnchorHandle o counterpartyId (solo uno).' },
      ]);
      expect(fields({ amount: 100, counterpartyId: cpty, destination: account })).toEqual([
        { path: 'destination', message: 'Debe indicar destination, targetAnchorHandle o counterpartyId (solo uno).' },
      ]);
      expect(fields({ amount: 100, destination: { ...key, ...account }, targetName: 'Ana' })).toContainEqual({
        path: 'destination',
        message: 'Debe indicar exactamente uno de brebKey o bankAccount.',
      });
      expect(fields({ amount: 100, destination: key })).toEqual([{ path: 'targetName', message: 'Es obligatorio para envíos BREB.' }]);
      expect(fields({ amount: 100, destination: account, targetDocument: '999999' })).toEqual([
        { path: 'targetDocument', message: 'Si se indica, debe ser el documento de la cuenta (destination.bankAccount.documentNumber).' },
      ]);
    });
    it('is a oneOf of closed objects, so generated clients get a union', () => {
      const send = doc.components.schemas.SendTransferRequest;
      expect(send.oneOf).toEqual([
        { $ref: '#/components/schemas/SendToBrebKeyRequest' },
        { $ref: '#/components/schemas/SendToAnchorRequest' },
        { $ref: '#/components/schemas/SendToBankAccountRequest' },
        { $ref: '#/components/schemas/SendToCounterpartyRequest' },
      ]);
      expect(doc.components.schemas.SendToCounterpartyRequest.required).toEqual(expect.arrayContaining(['amount', 'counterpartyId']));
      for (const r of send.oneOf) expect(doc.components.schemas[r.$ref.split('/').pop()].additionalProperties).toBe(false);
      expect(doc.components.schemas.SendToBrebKeyRequest.required).toEqual(expect.arrayContaining(['amount', 'destination', 'targetName']));
      expect(doc.components.schemas.SendToBankAccountRequest.required).not.toContain('targetName');
    });
  });

  describe('counterparties: exactly one destination, the holder with a Bre-B key only (oneOf of two closed variants)', () => {
    const create = validatorOf('/components/schemas/CreateCounterpartyRequest');
    const update = validatorOf('/components/schemas/UpdateCounterpartyRequest');
    const brebKey = { keyType: 'PHONE', keyValue: '3001234567' };
    const holder = { documentTypeId: 1, documentNumber: '1020304050', holderName: 'Ana Pérez' };
    const bankAccount = {
      bankId: 1,
      accountTypeId: 20,
      accountNumber: '123456789',
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderFirstName: 'Ana',
      holderLastName: 'Pérez',
    };
    const valid: Array<[string, Json]> = [
      ['a Bre-B key with its holder', { name: 'Ana', brebKey, ...holder }],
      ['a Bre-B key of AUTO type, tags', { name: 'Ana', brebKey: { keyValue: '@ana' }, ...holder, tags: ['a', 'b-2', 'c_3'] }],
      ['a bank account', { name: 'Ana', bankAccount }],
      ['a bank account, ten tags', { name: 'Ana', bankAccount, tags: Array.from({ length: 10 }, (_, i) => `t${i}`) }],
    ];
    const invalid: Array<[string, Json]> = [
      ['no destination', { name: 'Ana', ...holder }],
      ['both destinations', { name: 'Ana', brebKey, bankAccount, ...holder }],
      ['a Bre-B key without its holder name', { name: 'Ana', brebKey, documentTypeId: 1, documentNumber: '1020304050' }],
      ['a bank account with a holder at the top', { name: 'Ana', bankAccount, holderName: 'Ana Pérez' }],
      ['no name', { bankAccount }],
      ['a name of 121 characters', { name: 'n'.repeat(121), bankAccount }],
      ['eleven tags', { name: 'Ana', bankAccount, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }],
      ['an upper-case tag', { name: 'Ana', bankAccount, tags: ['Mayus'] }],
      ['a document type of 2', { name: 'Ana', brebKey, ...holder, documentTypeId: 2 }],
      ['an unknown field', { name: 'Ana', bankAccount, alias: 'x' }],
    ];
    it.each(valid)('create, %s: valid per the document and accepted', (_name, body) => {
      expect(create(body)).toBe(true);
      expect(accepts(CreateCounterpartyBody, body)).toBe(true);
    });
    it.each(invalid)('create, %s: invalid per the document and refused', (_name, body) => {
      expect(create(body)).toBe(false);
      expect(accepts(CreateCounterpartyBody, body)).toBe(false);
    });
    it('update: at least one field, at most one destination, in the document and on the server', () => {
      for (const body of [{ name: 'Otro' }, { tags: [] }, { brebKey }, { bankAccount }, { holderName: 'Ana' }]) {
        expect(update(body)).toBe(true);
        expect(accepts(UpdateCounterpartyBody, body)).toBe(true);
      }
      for (const body of [{}, { brebKey, bankAccount }, { name: '' }, { tags: ['A'] }, { replaceTags: true }]) {
        expect(update(body)).toBe(false);
        expect(accepts(UpdateCounterpartyBody, body)).toBe(false);
      }
    });
  });

  describe('POST /wallets/moves: from one wallet to the other, a bounded integer amount (oneOf of two closed variants)', () => {
    const move = validatorOf('/components/schemas/CreateWalletMoveRequest');
    const valid: Array<[string, Json]> = [
      ['BREB to ACH', { from: 'BREB', to: 'ACH', amountCents: 1 }],
      ['ACH to BREB with its texts', { from: 'ACH', to: 'BREB', amountCents: 200_000_000_000, reference: 'r'.repeat(64), description: 'd'.repeat(140) }],
    ];
    const invalid: Array<[string, Json]> = [
      ['from = to', { from: 'BREB', to: 'BREB', amountCents: 100 }],
      ['a PSE wallet', { from: 'PSE', to: 'ACH', amountCents: 100 }],
      ['no to', { from: 'BREB', amountCents: 100 }],
      ['no amount', { from: 'BREB', to: 'ACH' }],
      ['a string amount', { from: 'BREB', to: 'ACH', amountCents: '100' }],
      ['a fraction', { from: 'BREB', to: 'ACH', amountCents: 1.5 }],
      ['zero', { from: 'BREB', to: 'ACH', amountCents: 0 }],
      ['above the cap', { from: 'BREB', to: 'ACH', amountCents: 200_000_000_001 }],
      ['1e30', { from: 'BREB', to: 'ACH', amountCents: 1e30 }],
      ['a reference of 65', { from: 'BREB', to: 'ACH', amountCents: 100, reference: 'r'.repeat(65) }],
      ['an empty description', { from: 'BREB', to: 'ACH', amountCents: 100, description: '' }],
      ['an unknown field', { from: 'BREB', to: 'ACH', amountCents: 100, fee: 0 }],
    ];
    it.each(valid)('%s: valid per the document and accepted', (_name, body) => {
      expect(move(body)).toBe(true);
      expect(accepts(CreateWalletMoveBody, body)).toBe(true);
    });
    it.each(invalid)('%s: invalid per the document and refused', (_name, body) => {
      expect(move(body)).toBe(false);
      expect(accepts(CreateWalletMoveBody, body)).toBe(false);
    });
  });

  it('states the paging parameters as integers with bounds on every list endpoint, and the server reads them so', () => {
    const paging = operations.flatMap(({ where, op }) =>
      (op.parameters as Json[]).filter((p) => p.in === 'query' && ['limit', 'page'].includes(p.name)).map((p) => ({ where, p })),
    );
    expect(paging.length).toBeGreaterThanOrEqual(17);
    for (const { where, p } of paging) {
      expect(`${where} ${p.name}: ${p.schema.type}`).toBe(`${where} ${p.name}: integer`);
      expect(typeof p.schema.minimum).toBe('number');
      expect(typeof p.schema.maximum).toBe('number');
    }
    // Query values arrive as text: digits are the number; anything else is refused at query.<name>.
    expect(parseOrThrow(TransactionsQuery, { limit: '100', page: '0' })).toMatchObject({ limit: 100, page: 0 });
    expect(parseOrThrow(TransactionsQuery, {})).toMatchObject({ limit: 20, page: 0 });
    for (const bad of ['101', '0', '1e1', '1.5', 'abc', '', ' 5']) {
      try {
        parseOrThrow(TransactionsQuery, { limit: bad }, 'query');
        throw new Error(`limit=${JSON.stringify(bad)} was taken`);
      } catch (err) {
        expect(((err as AppError).details as { fields: Array<{ path: string }> }).fields.map((f) => f.path)).toEqual(['query.limit']);
      }
    }
  });

  it('gives every property or parameter named status an enum', () => {
    const bare: string[] = [];
    const enumOf = (s: Json | undefined): boolean => {
      if (!s) return false;
      if (s.enum || s.const !== undefined) return true;
      if (s.$ref) return enumOf(doc.components.schemas[s.$ref.split('/').pop()]);
      const branches = s.anyOf ?? s.oneOf;
      return Array.isArray(branches) && branches.every((b: Json) => b.type === 'null' || enumOf(b));
    };
    // A state named …status/…Status, not a count (byStatus) or an HTTP code (responseStatus).
    const aState = (name: string, s: Json | undefined) =>
      /^status$|Status$/.test(name) && !['array', 'integer'].includes(s?.type) && !(s?.anyOf ?? []).some((b: Json) => b.type === 'integer');
    for (const [node, at] of nodes(doc, '#')) {
      for (const [name, s] of Object.entries<Json>(node.properties ?? {})) if (aState(name, s) && !enumOf(s)) bare.push(`${at}/properties/${name}`);
      if (node.in && aState(node.name, node.schema) && !enumOf(node.schema)) bare.push(`${at} (parameter ${node.name})`);
    }
    expect(doc.components.schemas.BatchItem.properties.status).toEqual({ $ref: '#/components/schemas/BatchItemStatus' });
    expect(bare).toEqual([]);
  });

  it('bounds every integer from below (no amount or count down to -2^53)', () => {
    const unbounded: string[] = [];
    for (const [node, at] of nodes(doc, '#')) {
      const types = Array.isArray(node.type) ? node.type : [node.type];
      if (!types.includes('integer')) continue;
      if (typeof node.minimum !== 'number' || node.minimum < -200_000_000_000) unbounded.push(`${at}: minimum ${node.minimum}`);
    }
    expect(unbounded).toEqual([]);
    const quote = doc.components.schemas.Quote.properties;
    expect(quote.currentBalance).toMatchObject({ type: 'integer', format: 'int64', minimum: 0 });
    expect(quote.currentBalance.description).toContain('2^53');
    expect(doc.components.schemas.SendToBankAccountRequest.properties.amount).toMatchObject({ minimum: 100, maximum: 200_000_000_000 });
  });

  it('gives every date-like field and parameter a format (date or date-time)', () => {
    const formatted = (s: Json | undefined): boolean => {
      if (!s) return false;
      if (s.$ref) return formatted(doc.components.schemas[s.$ref.split('/').pop()]);
      if (s.format === 'date-time' || s.format === 'date') return true;
      const branches = s.anyOf ?? s.oneOf;
      return Array.isArray(branches) && branches.every((b: Json) => b.type === 'null' || formatted(b));
    };
    const dateLike = /^(at|from|to|date|since|until)$|At$/;
    // A wall-clock time of day ("HH:MM", the approval policy's timeOfDay) is no date.
    const timeOfDay = (s: Json): boolean => typeof s.pattern === 'string' && s.pattern.startsWith('^([01]\\d|2[0-3]):');
    // A closed set of words (a move's `from` and `to` wallet: BREB or ACH) is no date either.
    const closedSet = (s: Json): boolean => Array.isArray(s.enum) || 'const' in s;
    const missing: string[] = [];
    for (const [node, at] of nodes(doc, '#')) {
      for (const [name, s] of Object.entries<Json>(node.properties ?? {})) {
        if (dateLike.test(name) && !formatted(s) && !timeOfDay(s) && !closedSet(s)) missing.push(`${at}/properties/${name}`);
      }
      if (node.in === 'query' && dateLike.test(node.name) && !formatted(node.schema)) missing.push(`${at} (parameter ${node.name})`);
    }
    expect(missing).toEqual([]);
  });

  it('takes an instant query parameter exactly as the document states it (RFC 3339 with an offset)', () => {
    const at = (doc.paths['/wallets/balance/history'].get.parameters as Json[]).find((p) => p.name === 'at')!.schema;
    const validate = ajv.compile(at);
    for (const ok of ['2026-11-21T10:00:00-05:00', '2026-11-28T16:39:52.123456Z', '2026-11-28T16:39:52.123456789+00:00']) {
      expect(validate(ok)).toBe(true);
    }
    for (const bad of [
      '2026-11-21',
      '2026-11-21T10:00:00',
      '2026-11-21t10:00:00z',
      '2026-11-21 10:00:00Z',
      '2026-11-21T10:00:00+0500',
      '2026-11-28T16:39:52.1234567890Z',
    ]) {
      expect(`${bad}: ${validate(bad)}`).toBe(`${bad}: false`);
    }
    const from = (doc.paths['/wallets/transactions'].get.parameters as Json[]).find((p) => p.name === 'from')!.schema;
    const validateFrom = ajv.compile(from);
    for (const v of ['2026-11-21', '2026-11-21T10:00:00-05:00']) {
      expect(validateFrom(v)).toBe(true);
      expect(accepts(TransactionsQuery, { from: v })).toBe(true);
    }
    expect(validateFrom('21/11/2026')).toBe(false);
    expect(accepts(TransactionsQuery, { from: '21/11/2026' })).toBe(false);
  });

  it('requires the @ of a collect key alias, in the document and on the server', () => {
    const validate = validatorOf('/components/schemas/CreateCollectKeyRequest');
    for (const [keyValue, ok] of [
      ['@tienda01', true],
      ['tienda01', false],
      ['@ab', false],
    ] as const) {
      const body = { externalId: 'cust-1', name: 'Tienda', keyValue };
      expect(`${keyValue}: ${validate(body)}`).toBe(`${keyValue}: ${ok}`);
      expect(`${keyValue}: ${accepts(CreateCollectKeyBody, body)}`).toBe(`${keyValue}: ${ok}`);
    }
  });

  it('bounds a fixed fee and a PSE amount by the largest transfer (fee + IVA stays an exact JSON number) and takes two decimals as written, in the document and on the server', () => {
    const pse = {
      amountCents: 0,
      payerDocumentTypeId: 1,
      payerDocumentNumber: '1020304050',
      payerFirstName: 'Ana',
      payerLastName: 'Pérez',
      payerEmail: 'ana@example.co',
    };
    const cases: Array<[string, unknown, unknown, boolean]> = [
      ['SetFeeConfigRequest', FeeBody, { fixedFeeCents: 200_000_000_000, variableBps: 10_000 }, true],
      ['SetFeeConfigRequest', FeeBody, { fixedFeeCents: 200_000_000_001, variableBps: 0 }, false],
      ['CreatePseDepositRequest', CreatePseDepositBody, { ...pse, amountCents: 200_000_000_000 }, true],
      ['CreatePseDepositRequest', CreatePseDepositBody, { ...pse, amountCents: 200_000_000_001 }, false],
      ['PatchCompanyRequest', PatchCompanyBody, { rateLimitMultiplier: 1.15 }, true],
      ['PatchCompanyRequest', PatchCompanyBody, { rateLimitMultiplier: 999_999.99 }, true],
      ['PatchCompanyRequest', PatchCompanyBody, { rateLimitMultiplier: 1.155 }, false],
    ];
    for (const [id, schema, body, ok] of cases) {
      const validate = validatorOf(`/components/schemas/${id}`);
      expect(`${id} ${JSON.stringify(body)}: ${validate(body)}`).toBe(`${id} ${JSON.stringify(body)}: ${ok}`);
      expect(`${id} ${JSON.stringify(body)}: ${accepts(schema, body)}`).toBe(`${id} ${JSON.stringify(body)}: ${ok}`);
    }
  });

  it('documents one style of error path (query.<name> for query parameters)', () => {
    expect(doc.components.schemas.Error.properties.details.description).toContain('`query.<name>`');
  });
});
