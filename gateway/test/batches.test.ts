import { createHash, randomUUID } from 'node:crypto';
import { ERRORS } from '@wallet/platform';
import { createTestDatabase, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { startLedger } from '@wallet/ledger/testing';
import { BatchCreatedSchema, BatchItemPageSchema, BatchPageSchema, BatchSchema } from '../src/api/transfers/batches/schemas.js';
import { requestHash } from '../src/api/transfers/presenters.js';
import { startGateway, type StartedGateway } from '../src/testing.js';
import { adminOf, client, type Client, type Reply } from './support/http.js';
import { startTransferBatchesStandIn, type TransferBatchesStandIn } from './support/transfer-batches-stand-in.js';

/**
 * The batch endpoints (docs/batches.md) through a real gateway (HTTP, Postgres, Redis, a real ledger for
 * the companies' wallets) against a stand-in of the transfer service's batch RPCs: what the gateway
 * parses, checks and sends, and how it renders the answers.
 */
let db: TestDatabase;
let ledger: Awaited<ReturnType<typeof startLedger>>;
let transfer: TransferBatchesStandIn;
let gw: StartedGateway;
let api: Client;
let writeKey: string;
let readKey: string;
let otherKey: string;

beforeAll(async () => {
  db = await createTestDatabase('gw');
  const namespace = testNamespace();
  ledger = await startLedger({ databaseUrl: db.url, natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', namespace, port: 0, logLevel: 'warn' });
  transfer = await startTransferBatchesStandIn();
  gw = await startGateway({
    databaseUrl: db.url,
    ledgerAddress: ledger.address,
    transferAddress: transfer.address,
    namespace,
    env: { LOG_LEVEL: 'warn', RATE_LIMIT_FINANCIAL: '100000', RATE_LIMIT_READS: '100000' },
  });
  api = client(gw.url);
  const admin = adminOf(api, gw.adminToken);
  const co = await admin.createCompany();
  writeKey = (await admin.issueKey(co.id, 'WRITE')).key;
  readKey = (await admin.issueKey(co.id, 'READ')).key;
  otherKey = (await admin.issueKey((await admin.createCompany()).id, 'WRITE')).key;
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await transfer?.stop();
  await ledger?.stop();
  await db?.drop();
});

const breb = (extra: Record<string, unknown> = {}) => ({
  amount: 10_000,
  destination: { brebKey: { type: 'PHONE', value: '3001234567' } },
  targetName: 'Ana Pérez',
  targetDocument: '1012345678',
  ...extra,
});
const ach = (extra: Record<string, unknown> = {}) => ({
  amount: 25_000,
  destination: {
    bankAccount: {
      bankId: 1,
      accountTypeId: 20,
      accountNumber: '12345678901',
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderFirstName: 'Ana',
      holderLastName: 'Pérez',
    },
  },
  ...extra,
});
const postCsv = (csv: string | Buffer, query = '', headers: Record<string, string> = {}, token = writeKey) =>
  api.post(`/transfers/batches/csv${query}`, { token, raw: csv, headers: { 'content-type': 'text/csv; charset=utf-8', ...headers } });
function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code });
}
const sentSince = (n: number) => transfer.created.slice(n);

describe('POST /transfers/batches (JSON)', () => {
  it('201: the batch and one result per item; malformed items are invalid items sent with INVALID_REQUEST, not a 400', async () => {
    const before = transfer.created.length;
    const body = {
      reference: `lote-${randomUUID()}`,
      description: 'Nómina',
      mode: 'valid_only',
      items: [breb({ reference: 'a' }), { amount: 'mil', reference: 'b' }, ach({ reference: 'c' })],
    };
    const r = await api.post('/transfers/batches', { token: writeKey, body, headers: { 'Idempotency-Key': `k-${randomUUID()}` } });
    expect(r.status).toBe(201);
    expect(BatchCreatedSchema.parse(r.body)).toEqual(r.body);
    expect(r.body).toMatchObject({
      status: 'VALIDATED',
      reference: body.reference,
      description: 'Nómina',
      mode: 'valid_only',
      source: 'json',
      itemCount: 3,
      validCount: 2,
      invalidCount: 1,
      totals: [
        { rail: 'BREB', count: 1, amount: 10_000 },
        { rail: 'ACH', count: 1, amount: 25_000 },
      ],
      progress: { finished: 1, total: 3, percent: 33 },
      results: [
        { item: 1, line: null, valid: true },
        { item: 2, line: null, valid: false, error: 'INVALID_REQUEST', message: expect.stringMatching(/^amount: /) },
        { item: 3, line: null, valid: true },
      ],
    });
    const [req] = sentSince(before);
    expect(req).toMatchObject({
      reference: body.reference,
      description: 'Nómina',
      mode: 'VALID_ONLY',
      source: 'JSON',
      requestHash: requestHash({ ...body }),
      idempotencyKey: expect.stringMatching(/^k-/),
    });
    expect(req!.items.map((i) => [i.seq, i.line, i.invalidCode ?? null])).toEqual([
      [1, 0, null],
      [2, 0, 'INVALID_REQUEST'],
      [3, 0, null],
    ]);
    expect(req!.items[0]!.send).toMatchObject({ amount: 10_000n, brebKey: { type: 'PHONE', value: '3001234567' }, targetName: 'Ana Pérez', reference: 'a' });
    expect(req!.items[1]!.send).toBeUndefined();
    expect(req!.items[2]!.send!.bankAccount).toMatchObject({ bankId: 1, bankName: 'Bancolombia', bankAchCode: '1007' });
  });

  it('mode defaults to all (an invalid item rejects the batch); the same Idempotency-Key replays with Idempotent-Replayed', async () => {
    const key = `k-${randomUUID()}`;
    const body = { items: [breb(), { ...breb(), amount: 1 }] };
    const first = await api.post('/transfers/batches', { token: writeKey, body, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'REJECTED', mode: 'all', reference: null });
    const again = await api.post('/transfers/batches', { token: writeKey, body, headers: { 'Idempotency-Key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expectError(
      await api.post('/transfers/batches', { token: writeKey, body: { items: [breb()] }, headers: { 'Idempotency-Key': key } }),
      409,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  it('400 for a bad envelope; 422 for more than 10,000 items or a repeated item reference — and nothing reaches the transfer service', async () => {
    const before = transfer.created.length;
    expectError(await api.post('/transfers/batches', { token: writeKey, body: { items: [] } }), 400, 'INVALID_REQUEST');
    expectError(await api.post('/transfers/batches', { token: writeKey, body: { items: [breb()], mode: 'some' } }), 400, 'INVALID_REQUEST');
    expectError(await api.post('/transfers/batches', { token: writeKey, body: { items: [breb()], extra: 1 } }), 400, 'INVALID_REQUEST');
    // Batch fields of a JSON request go in the body: the query string takes none (the CSV operation's are its own).
    const inQuery = await api.post('/transfers/batches?mode=all', { token: writeKey, body: { items: [breb()] } });
    expectError(inQuery, 400, 'INVALID_REQUEST');
    expect(inQuery.body.details.fields).toEqual([{ path: 'query.mode', message: 'Campo no permitido.' }]);
    const many = await api.post('/transfers/batches', { token: writeKey, body: { items: Array.from({ length: 10_001 }, () => breb()) } });
    expectError(many, 422, 'VALIDATION_ERROR');
    expect(many.body.message).toBe('El lote no puede tener más de 10.000 ítems.');
    const dup = await api.post('/transfers/batches', {
      token: writeKey,
      body: { items: [breb({ reference: 'x' }), breb({ reference: 'y' }), breb({ reference: 'x' })] },
    });
    expectError(dup, 422, 'VALIDATION_ERROR');
    expect(dup.body.details.fields).toEqual([
      { path: 'items.2.reference', message: expect.stringContaining('La referencia "x" se repite en items.2.reference') },
    ]);
    expect(sentSince(before)).toEqual([]);
  });

  it('a READ key cannot create (403); other types are 415; above 10 MiB is 413', async () => {
    expectError(await api.post('/transfers/batches', { token: readKey, body: { items: [breb()] } }), 403, 'INSUFFICIENT_SCOPE');
    expectError(
      await api.post('/transfers/batches', { token: writeKey, raw: 'amount\n1\n', headers: { 'content-type': 'text/plain' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await api.post('/transfers/batches/csv', { token: writeKey, raw: 'amount\n1\n', headers: { 'content-type': 'text/csv; charset=iso-8859-1' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    // Each operation takes its own media type: a CSV file to the JSON one, JSON to the CSV one.
    expectError(
      await api.post('/transfers/batches', { token: writeKey, raw: 'amount\n1\n', headers: { 'content-type': 'text/csv' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(await api.post('/transfers/batches/csv', { token: writeKey, body: { items: [breb()] } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const tooBig = await postCsv(Buffer.alloc(10 * 1024 * 1024 + 1, 'a'));
    expectError(tooBig, 413, 'PAYLOAD_TOO_LARGE');
    expect(tooBig.body.message).toContain('10 MiB');
  });
});

describe('POST /transfers/batches/csv', () => {
  const csv =
    '\uFEFFamount;keyType;keyValue;targetName;targetDocument;bankId;accountTypeId;accountNumber;documentTypeId;documentNumber;holderFirstName;holderLastName;reference\r\n' +
    '150000,50;PHONE;3001234567;Ana Pérez;1012345678;;;;;;;;n-1\r\n' +
    '\r\n' +
    '2000;;;;;1;Ahorros;12345678901;CC;1020304050;Luis;Gómez;n-2\r\n' +
    '10;PHONE;3001234567;;;;;;;;;;n-3\r\n';

  it('201: rows become items with their lines; batch fields from the query; the request hash is of mode, reference, description and the bytes', async () => {
    const before = transfer.created.length;
    const ref = `csv-${randomUUID()}`;
    const r = await postCsv(csv, `?reference=${ref}&description=&mode=valid_only`);
    expect(r.status).toBe(201);
    expect(BatchCreatedSchema.parse(r.body)).toEqual(r.body);
    expect(r.body).toMatchObject({ source: 'csv', mode: 'valid_only', reference: ref, description: null, itemCount: 3, validCount: 2 });
    expect(r.body.results).toEqual([
      { item: 1, line: 2, valid: true },
      { item: 2, line: 4, valid: true },
      { item: 3, line: 5, valid: false, error: 'INVALID_REQUEST', message: expect.stringContaining('targetName') },
    ]);
    const [req] = sentSince(before);
    expect(req).toMatchObject({ source: 'CSV', mode: 'VALID_ONLY', reference: ref, description: undefined });
    expect(req!.requestHash).toBe(createHash('sha256').update(`csv\nvalid_only\n${ref}\n\n`).update(Buffer.from(csv)).digest('hex'));
    expect(req!.items.map((i) => i.line)).toEqual([2, 4, 5]);
    expect(req!.items[0]!.send).toMatchObject({ amount: 15_000_050n, brebKey: { type: 'PHONE', value: '3001234567' } });
    expect(req!.items[1]!.send!.bankAccount).toMatchObject({ bankId: 1, accountTypeId: 20, documentTypeId: 1, bankName: 'Bancolombia' });
  });

  it('the Idempotency-Key is bound to the file and its query: another file or another mode is IDEMPOTENCY_KEY_REUSED', async () => {
    const key = `k-${randomUUID()}`;
    const first = await postCsv(csv, '?mode=valid_only', { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const again = await postCsv(csv, '?mode=valid_only', { 'Idempotency-Key': key });
    expect([again.status, again.headers.get('idempotent-replayed'), again.body.id]).toEqual([201, 'true', first.body.id]);
    expectError(await postCsv(csv, '?mode=all', { 'Idempotency-Key': key }), 409, 'IDEMPOTENCY_KEY_REUSED');
    expectError(await postCsv(csv.replace('n-3', 'n-4'), '?mode=valid_only', { 'Idempotency-Key': key }), 409, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('400 for a bad file (unknown column, not UTF-8, malformed, no rows); 422 for repeated references; nothing sent', async () => {
    const before = transfer.created.length;
    const unknown = await postCsv('amount;keyValue;monto\n1;2;3\n');
    expectError(unknown, 400, 'INVALID_REQUEST');
    expect(unknown.body.details.fields).toEqual([{ path: 'line 1', message: 'Columna desconocida: "monto".' }]);
    const latin1 = await postCsv(
      Buffer.concat([Buffer.from('amount;keyType;keyValue;targetName\n1;PHONE;3001234567;P'), Buffer.from([0xe9]), Buffer.from('rez\n')]),
    );
    expect([latin1.status, latin1.body.message]).toEqual([400, 'El archivo no está codificado en UTF-8.']);
    const unclosed = await postCsv('amount;keyValue\n1;"x\n');
    expect([unclosed.status, unclosed.body.details.fields[0].path]).toEqual([400, 'line 2']);
    expectError(await postCsv('amount;keyValue\n'), 400, 'INVALID_REQUEST');
    expectError(await postCsv('amount;keyType;keyValue;targetName\n1;PHONE;3001234567;Ana\n', '?mode=nope'), 400, 'INVALID_REQUEST');
    const dup = await postCsv('amount;keyType;keyValue;targetName;reference\n100;PHONE;3001234567;Ana;r\n\n100;PHONE;3001234567;Ana;r\n');
    expectError(dup, 422, 'VALIDATION_ERROR');
    expect(dup.body.details.fields).toEqual([{ path: 'line 4', message: 'La referencia "r" se repite en la línea 4; apareció antes en la línea 2.' }]);
    expect(sentSince(before)).toEqual([]);
  });
});

describe('a batch after creation', () => {
  async function created(n = 3) {
    const r = await api.post('/transfers/batches', {
      token: writeKey,
      body: { mode: 'valid_only', items: Array.from({ length: n }, (_, i) => breb({ reference: `r${i}`, targetName: i === 0 ? '=1+1' : 'Ana' })) },
    });
    expect(r.status).toBe(201);
    return r.body.id as string;
  }

  it('GET one, the list (newest first, paged) and the items (paged, by status)', async () => {
    const id = await created(3);
    const one = await api.get(`/transfers/batches/${id}`, { token: readKey });
    expect(one.status).toBe(200);
    expect(BatchSchema.parse(one.body)).toEqual(one.body);
    expect(one.body).toMatchObject({ id, status: 'VALIDATED', itemCount: 3 });
    const list = await api.get('/transfers/batches?limit=1', { token: readKey });
    expect(list.status).toBe(200);
    expect(BatchPageSchema.parse(list.body)).toEqual(list.body);
    expect(list.body.items.map((b: { id: string }) => b.id)).toEqual([id]);
    expect(list.body.nextCursor).toEqual(expect.any(String));
    for (const q of ['limit=101', 'limit=0', 'status=NOPE', 'cursor=', 'extra=1']) {
      expectError(await api.get(`/transfers/batches?${q}`, { token: readKey }), 400, 'INVALID_REQUEST');
    }
    for (const q of ['limit=1001', 'status=NOPE', 'cursor=']) {
      expectError(await api.get(`/transfers/batches/${id}/items?${q}`, { token: readKey }), 400, 'INVALID_REQUEST');
    }
    const items = await api.get(`/transfers/batches/${id}/items?limit=2`, { token: readKey });
    expect(BatchItemPageSchema.parse(items.body)).toEqual(items.body);
    expect(items.body.items.map((i: { item: number }) => i.item)).toEqual([1, 2]);
    expect(items.body.items[0]).toMatchObject({
      line: null,
      status: 'VALID',
      rail: 'BREB',
      amount: 10_000,
      reference: 'r0',
      destination: 'PHONE 3001234567',
      transactionId: null,
    });
    const next = await api.get(`/transfers/batches/${id}/items?limit=2&cursor=${items.body.nextCursor}`, { token: readKey });
    expect([next.body.items.map((i: { item: number }) => i.item), next.body.nextCursor]).toEqual([[3], null]);
    expect((await api.get(`/transfers/batches/${id}/items?status=INVALID`, { token: readKey })).body.items).toEqual([]);
  });

  it('execute → 202 EXECUTING; cancel after that → 409; cancel of a validated batch → 200 CANCELLED, then execute → 409', async () => {
    const id = await created(2);
    expectError(await api.post(`/transfers/batches/${id}/execute`, { token: readKey }), 403, 'INSUFFICIENT_SCOPE');
    const run = await api.post(`/transfers/batches/${id}/execute`, { token: writeKey });
    expect([run.status, run.body.status]).toEqual([202, 'EXECUTING']);
    expect(run.body.executedAt).toEqual(expect.any(String));
    expectError(await api.post(`/transfers/batches/${id}/cancel`, { token: writeKey }), 409, 'INVALID_STATE_TRANSITION');
    const other = await created(1);
    const cancel = await api.post(`/transfers/batches/${other}/cancel`, { token: writeKey });
    expect([cancel.status, cancel.body.status]).toEqual([200, 'CANCELLED']);
    expectError(await api.post(`/transfers/batches/${other}/execute`, { token: writeKey }), 409, 'INVALID_STATE_TRANSITION');
  });

  it("404 BATCH_NOT_FOUND for a malformed id, an unknown one, and another company's batch", async () => {
    const id = await created(1);
    for (const path of [
      '/transfers/batches/nope',
      `/transfers/batches/${randomUUID()}`,
      '/transfers/batches/nope/items',
      '/transfers/batches/nope/results.csv',
    ]) {
      expectError(await api.get(path, { token: readKey }), 404, 'BATCH_NOT_FOUND');
    }
    expectError(await api.post('/transfers/batches/nope/execute', { token: writeKey }), 404, 'BATCH_NOT_FOUND');
    expectError(await api.post('/transfers/batches/nope/cancel', { token: writeKey }), 404, 'BATCH_NOT_FOUND');
    expectError(await api.post(`/transfers/batches/${randomUUID()}/cancel`, { token: writeKey }), 404, 'BATCH_NOT_FOUND');
    expectError(await api.post(`/transfers/batches/${id}/cancel`, { token: readKey }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await api.get(`/transfers/batches/${id}`, { token: otherKey }), 404, 'BATCH_NOT_FOUND');
    expectError(await api.get(`/transfers/batches/${randomUUID()}/results.csv`, { token: readKey }), 404, 'BATCH_NOT_FOUND');
  });

  it('results.csv: a streamed download with BOM, `;`, CRLF, pesos with a decimal comma and formula-safe cells, every item in order', async () => {
    const id = await created(2_500); // three pages of the service's stream
    const res = await fetch(`${gw.url}/transfers/batches/${id}/results.csv`, { headers: { authorization: `Bearer ${readKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="lote-${id}.csv"`);
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());
    expect(
      text.startsWith(
        '\uFEFF"item";"linea";"estado";"riel";"monto";"comision";"iva";"beneficiario";"documento";"referencia";"destino";"transaccion";"error";"mensaje";"completada"\r\n',
      ),
    ).toBe(true);
    const rows = text.slice(1).split('\r\n').filter(Boolean);
    expect(rows).toHaveLength(2_501);
    expect(rows[1]).toBe('"1";"";"VALID";"BREB";"100,00";"0,00";"0,00";"\'=1+1";"1012345678";"r0";"PHONE 3001234567";"";"";"";""');
    expect(rows[2_500]!.startsWith('"2500";')).toBe(true);
  });
});

describe('OpenAPI', () => {
  it('serves the eight batch operations: create from JSON and from a CSV file (its fields in the query), each with its one request type', async () => {
    const doc = (await api.get('/openapi.json')).body;
    expect(Object.keys(doc.paths['/transfers/batches']).sort()).toEqual(['get', 'post']);
    for (const p of ['/transfers/batches/{id}', '/transfers/batches/{id}/items', '/transfers/batches/{id}/results.csv']) expect(doc.paths[p].get).toBeDefined();
    for (const p of ['/transfers/batches/{id}/execute', '/transfers/batches/{id}/cancel']) expect(doc.paths[p].post).toBeDefined();
    expect(Object.keys(doc.paths['/transfers/batches'].post.requestBody.content)).toEqual(['application/json']);
    const inQuery = (op: { parameters?: Array<{ $ref?: string; in?: string; name?: string }> }) =>
      (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    expect(inQuery(doc.paths['/transfers/batches'].post)).toEqual([]);
    const csv = doc.paths['/transfers/batches/csv'].post;
    expect(Object.keys(csv.requestBody.content)).toEqual(['text/csv']);
    expect(inQuery(csv)).toEqual(['reference', 'description', 'mode']);
    expect(doc.paths['/transfers/batches/{id}'].get.responses['404'].content['application/json'].schema.allOf[1].properties.error.enum).toEqual([
      'BATCH_NOT_FOUND',
    ]);
  });
});
