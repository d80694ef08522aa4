import { randomUUID } from 'node:crypto';
import { ERRORS } from '@wallet/platform';
import { CounterpartyPageSchema, CounterpartySchema } from '../src/api/counterparties/schemas.js';
import { adminOf, client, expectNoInternals, type Client, type Reply } from './support/http.js';
import { sql } from './support/sql.js';
import { startStack, type Stack } from './support/stack.js';

/**
 * The counterparty routes (docs/counterparties.md) through a real gateway (HTTP, Postgres, Redis)
 * against the real transfer service and the sandbox's Bre-B directory and ACH rail: every route's
 * happy path, the documented errors, bad input refused before the service, company isolation and
 * scopes. Every answer is checked against the schema the document publishes.
 */
let stack: Stack;
let api: Client;

interface Company {
  id: string;
  writeKey: string;
  readKey: string;
}
let co: Company;
let other: Company;

async function company(name: string): Promise<Company> {
  const admin = adminOf(api, stack.gw.adminToken);
  const c = await admin.createCompany({ name });
  expect((await admin.patch(c.id, { rateLimitMultiplier: 1000 })).status).toBe(200);
  return { id: c.id, writeKey: (await admin.issueKey(c.id, 'WRITE')).key, readKey: (await admin.issueKey(c.id, 'READ')).key };
}

beforeAll(async () => {
  stack = await startStack();
  api = client(stack.gw.url);
  co = await company('Pagos Proveedores S.A.S.');
  other = await company('Ajena S.A.S.');
}, 90_000);
afterAll(async () => {
  await stack?.stop();
});

const post = (path: string, body: unknown, c: Company = co, headers: Record<string, string> = {}) => api.post(path, { token: c.writeKey, body, headers });
const get = (path: string, c: Company = co) => api.get(path, { token: c.readKey });
const patch = (path: string, body: unknown, c: Company = co) => api.patch(path, { token: c.writeKey, body });
const del = (path: string, c: Company = co) => api.del(path, { token: c.writeKey });

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error, message: r.body?.message }).toEqual({ status, error: code, message: ERRORS[code].message });
  expectNoInternals(r.text);
}
/** The field paths of a 400 INVALID_REQUEST. */
function fieldsOf(r: Reply): string[] {
  expectError(r, 400, 'INVALID_REQUEST');
  return (r.body.details.fields as Array<{ path: string }>).map((f) => f.path);
}

/** An account number no other test uses (the sandbox's prenote rules read its last digits: never …17 here). */
const accountNumber = () => `5${String(Math.floor(Math.random() * 1e10)).padStart(10, '0')}`.replace(/17$/, '18');
const bankAccount = (n = accountNumber()) => ({
  bankId: 1,
  accountTypeId: 20,
  accountNumber: n,
  documentTypeId: 1,
  documentNumber: '1020304050',
  holderFirstName: 'Ana María',
  holderLastName: 'Pérez Gómez',
});
const ach = (extra: Record<string, unknown> = {}) => ({ name: 'Proveedor ACH', bankAccount: bankAccount(), ...extra });

/** The holder the sandbox directory names for a key (through the gateway's own resolve-key). */
async function holderOf(keyValue: string): Promise<{ fullName: string; idValue: string }> {
  const r = await post('/transfers/resolve-key', { keyValue });
  expect(r.status).toBe(200);
  return r.body.recipient;
}
async function breb(keyValue: string, extra: Record<string, unknown> = {}) {
  const h = await holderOf(keyValue);
  return { name: 'Proveedor Bre-B', brebKey: { keyType: 'PHONE', keyValue }, documentTypeId: 1, documentNumber: h.idValue, holderName: h.fullName, ...extra };
}

async function created(body: unknown, c: Company = co): Promise<any> {
  const r = await post('/counterparties', body, c);
  expect(r.status).toBe(201);
  return CounterpartySchema.parse(r.body);
}

describe('POST /counterparties', () => {
  it('a Bre-B key whose holder the directory names as given: 201, VERIFIED by the directory', async () => {
    const body = await breb('3001112233', { tags: ['proveedores', 'bogota'] });
    const c = await created(body);
    expect(c).toMatchObject({
      id: expect.stringMatching(/^cpty_[a-z0-9]{24}$/),
      name: 'Proveedor Bre-B',
      rail: 'BREB',
      brebKey: { keyType: 'PHONE', keyValue: '3001112233' },
      bankAccount: null,
      documentTypeId: 1,
      documentNumber: body.documentNumber,
      holderName: body.holderName,
      tags: ['proveedores', 'bogota'],
      verification: { status: 'VERIFIED', method: 'DIRECTORY', reasonCode: null, reason: null, decidedAt: expect.any(String) },
    });
  });

  it('a Bre-B key with another holder name: 201, FAILED with the reason code and a Spanish reason', async () => {
    const c = await created(await breb('3001112234', { holderName: 'Persona Totalmente Distinta' }));
    expect(c.verification).toMatchObject({ status: 'FAILED', method: 'DIRECTORY', reasonCode: 'NAME_MISMATCH', reason: expect.stringContaining('nombre') });
  });

  it('a bank account: 201, PENDING on its prenote, the account number only masked', async () => {
    const account = bankAccount();
    const r = await post('/counterparties', { name: 'Nómina', bankAccount: account });
    expect(r.status).toBe(201);
    const c = CounterpartySchema.parse(r.body);
    expect(c).toMatchObject({
      rail: 'ACH',
      brebKey: null,
      bankAccount: { bankId: 1, bankName: 'Bancolombia', accountTypeId: 20, accountNumberMasked: `****${account.accountNumber.slice(-4)}` },
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderName: 'Ana María Pérez Gómez',
      tags: [],
      verification: { status: 'PENDING', method: 'PRENOTE', reasonCode: null, decidedAt: null },
    });
    expect(r.text).not.toContain(account.accountNumber);
  });

  it('Idempotency-Key: the same body answers the same counterparty (replayed); another body 409 IDEMPOTENCY_KEY_REUSED', async () => {
    const key = `cp-${randomUUID()}`;
    const body = ach();
    const first = await post('/counterparties', body, co, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const again = await post('/counterparties', body, co, { 'Idempotency-Key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expectError(await post('/counterparties', { ...body, name: 'Otro nombre' }, co, { 'Idempotency-Key': key }), 409, 'IDEMPOTENCY_KEY_REUSED');
    // Without a key, the same body makes another one.
    expect((await created(body)).id).not.toBe(first.body.id);
  });

  it('the key is bound in the transfer service too: a retry whose gateway record is gone gets the same counterparty, another body 409', async () => {
    const key = `cp-${randomUUID()}`;
    const body = ach();
    const first = await post('/counterparties', body, co, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    // The gateway's replay record expires (24 h); the service's binding does not.
    await sql(stack.db.url, 'delete from gateway.idempotency_keys where company_id = $1 and key = $2', [co.id, key]);
    const again = await post('/counterparties', body, co, { 'Idempotency-Key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.id).toBe(first.body.id);
    await sql(stack.db.url, 'delete from gateway.idempotency_keys where company_id = $1 and key = $2', [co.id, key]);
    expectError(await post('/counterparties', { ...body, name: 'Otro' }, co, { 'Idempotency-Key': key }), 409, 'IDEMPOTENCY_KEY_REUSED');
  });

  describe('bad input: 400 INVALID_REQUEST naming every field, nothing created', () => {
    const key = { keyType: 'PHONE', keyValue: '3001112235' };
    const holder = { documentTypeId: 1, documentNumber: '1020304050', holderName: 'Ana Pérez' };
    const cases: Array<[string, () => unknown, string[]]> = [
      ['neither destination', () => ({ name: 'X', ...holder }), ['brebKey']],
      ['both destinations', () => ({ name: 'X', brebKey: key, bankAccount: bankAccount(), ...holder }), ['brebKey']],
      ['a Bre-B key without its holder', () => ({ name: 'X', brebKey: key }), ['documentTypeId', 'documentNumber', 'holderName']],
      ['a bank account with a second holder at the top', () => ({ ...ach(), holderName: 'Otra', documentNumber: '999' }), ['documentNumber', 'holderName']],
      ['no name', () => ({ bankAccount: bankAccount() }), ['name']],
      ['a blank name', () => ach({ name: '   ' }), ['name']],
      ['a name of 121 characters', () => ach({ name: 'n'.repeat(121) }), ['name']],
      ['a name that is a number', () => ach({ name: 42 }), ['name']],
      ['a holder name of 10,000 characters', () => ({ name: 'X', brebKey: key, ...holder, holderName: 'a'.repeat(10_000) }), ['holderName']],
      ['11 tags', () => ach({ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }), ['tags']],
      ['an upper-case tag', () => ach({ tags: ['ok', 'Proveedores'] }), ['tags.1']],
      ['a tag of 33 characters', () => ach({ tags: ['t'.repeat(33)] }), ['tags.0']],
      ['tags as a string', () => ach({ tags: 'proveedores' }), ['tags']],
      ['an account number with letters', () => ach({ bankAccount: { ...bankAccount(), accountNumber: '12AB5678' } }), ['bankAccount.accountNumber']],
      ['an account type outside 20-22', () => ach({ bankAccount: { ...bankAccount(), accountTypeId: 23 } }), ['bankAccount.accountTypeId']],
      ['a bank id past 2^53', () => ach({ bankAccount: { ...bankAccount(), bankId: 2 ** 60 } }), ['bankAccount.bankId']],
      ['a bank outside the dictionary', () => ach({ bankAccount: { ...bankAccount(), bankId: 999 } }), ['bankAccount.bankId']],
      ['a key value of 65 characters', () => ({ name: 'X', brebKey: { keyType: 'ALPHANUM', keyValue: 'k'.repeat(65) }, ...holder }), ['brebKey.keyValue']],
      ['an unknown key type', () => ({ name: 'X', brebKey: { keyType: 'IBAN', keyValue: '3001112235' }, ...holder }), ['brebKey.keyType']],
      ['a document type of 2', () => ({ name: 'X', brebKey: key, ...holder, documentTypeId: 2 }), ['documentTypeId']],
      ['an unknown field', () => ach({ alias: 'x' }), ['alias']],
    ];
    it.each(cases)('%s', async (_name, body, paths) => {
      const before = (await get('/counterparties?limit=100')).body.items.length;
      const r = await post('/counterparties', body());
      expect(fieldsOf(r)).toEqual(expect.arrayContaining(paths));
      expect((await get('/counterparties?limit=100')).body.items.length).toBe(before);
    });

    it('a key that is no key of its type is 422 INVALID_KEY, as for a send (the document cannot pair them)', async () => {
      const r = await post('/counterparties', { name: 'X', brebKey: { keyType: 'PHONE', keyValue: '12345' }, ...holder });
      expect({ status: r.status, error: r.body.error, message: r.body.message }).toEqual({
        status: 422,
        error: 'INVALID_KEY',
        message: 'El valor no es una llave válida de tipo PHONE.',
      });
      expect((await get('/counterparties?limit=100')).body.items.every((c: { name: string }) => c.name !== 'X')).toBe(true);
    });

    it('a malformed JSON body and a body that is not an object', async () => {
      const bad = await api.post('/counterparties', { token: co.writeKey, raw: '{"name": "X", ', headers: { 'content-type': 'application/json' } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('INVALID_REQUEST');
      expectNoInternals(bad.text);
      expect((await post('/counterparties', [ach()])).status).toBe(400);
    });
  });
});

describe('GET /counterparties', () => {
  let mine: Company;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    mine = await company('Listas S.A.S.');
    ids.verified = (await created(await breb('3001112240', { tags: ['a'] }), mine)).id;
    ids.failed = (await created(await breb('3001112241', { holderName: 'Nombre Que No Es', tags: ['a', 'b'] }), mine)).id;
    ids.pending = (await created(ach({ tags: ['b'] }), mine)).id;
  });
  const list = async (q = '') => {
    const r = await get(`/counterparties${q}`, mine);
    expect(r.status).toBe(200);
    return CounterpartyPageSchema.parse(r.body);
  };

  it('lists newest first, filtered by tag, status and rail', async () => {
    expect((await list()).items.map((c) => c.id)).toEqual([ids.pending, ids.failed, ids.verified]);
    expect((await list('?tag=a')).items.map((c) => c.id)).toEqual([ids.failed, ids.verified]);
    expect((await list('?status=FAILED')).items.map((c) => c.id)).toEqual([ids.failed]);
    expect((await list('?rail=ACH')).items.map((c) => c.id)).toEqual([ids.pending]);
    expect((await list('?rail=BREB&tag=b')).items.map((c) => c.id)).toEqual([ids.failed]);
    expect((await list('?status=UNVERIFIED')).items).toEqual([]);
  });

  it('pages with the cursor', async () => {
    const p1 = await list('?limit=2');
    expect(p1.items.map((c) => c.id)).toEqual([ids.pending, ids.failed]);
    expect(p1.nextCursor).toEqual(expect.any(String));
    const p2 = await list(`?limit=2&cursor=${encodeURIComponent(p1.nextCursor!)}`);
    expect(p2).toEqual({ items: [expect.objectContaining({ id: ids.verified })], nextCursor: null });
  });

  it('refuses bad filters at query.<name>', async () => {
    for (const [q, path] of [
      ['?status=DONE', 'query.status'],
      ['?rail=SWIFT', 'query.rail'],
      ['?limit=0', 'query.limit'],
      ['?limit=101', 'query.limit'],
      ['?limit=diez', 'query.limit'],
      ['?tag=Mayus', 'query.tag'],
      [`?cursor=${'x'.repeat(513)}`, 'query.cursor'],
    ] as const) {
      expect(fieldsOf(await get(`/counterparties${q}`, mine))).toEqual([path]);
    }
    // A cursor of the right size that the service cannot read.
    expect(fieldsOf(await get('/counterparties?cursor=no-es-un-cursor', mine))).toEqual(['query.cursor']);
  });
});

describe('GET, PATCH, DELETE /counterparties/{id} and POST /counterparties/{id}/verify', () => {
  it('GET answers the counterparty as created', async () => {
    const c = await created(ach({ tags: ['x'] }));
    const r = await get(`/counterparties/${c.id}`);
    expect(r.status).toBe(200);
    expect(CounterpartySchema.parse(r.body)).toEqual(c);
  });

  it('PATCH of the name and tags keeps the verification; of the account starts a new one', async () => {
    const c = await created(ach({ tags: ['x'] }));
    const renamed = await patch(`/counterparties/${c.id}`, { name: 'Nuevo nombre', tags: ['y', 'z'] });
    expect(renamed.status).toBe(200);
    expect(CounterpartySchema.parse(renamed.body)).toMatchObject({
      name: 'Nuevo nombre',
      tags: ['y', 'z'],
      verification: c.verification,
      version: c.version + 1,
    });
    const cleared = await patch(`/counterparties/${c.id}`, { tags: [] });
    expect(cleared.body.tags).toEqual([]);

    const n = accountNumber();
    const moved = await patch(`/counterparties/${c.id}`, { bankAccount: { ...bankAccount(n), bankId: 2 } });
    expect(moved.status).toBe(200);
    expect(CounterpartySchema.parse(moved.body)).toMatchObject({
      bankAccount: { bankId: 2, bankName: 'Banco de Bogotá', accountNumberMasked: `****${n.slice(-4)}` },
      verification: { status: 'PENDING', method: 'PRENOTE' },
    });
    expect(moved.body.verification.requestedAt >= c.verification.requestedAt).toBe(true);
    expect(moved.text).not.toContain(n);
  });

  it('PATCH of a Bre-B holder name starts a new verification: the directory decides again', async () => {
    const body = await breb('3001112250');
    const c = await created({ ...body, holderName: 'Nombre Equivocado' });
    expect(c.verification.status).toBe('FAILED');
    const fixed = await patch(`/counterparties/${c.id}`, { holderName: body.holderName });
    expect(fixed.status).toBe(200);
    expect(fixed.body.verification).toMatchObject({ status: 'VERIFIED', reasonCode: null, reason: null });
  });

  it('PATCH refuses an empty body, both destinations, bad fields and an ACH holder at the top', async () => {
    const c = await created(ach());
    expect(fieldsOf(await patch(`/counterparties/${c.id}`, {}))).toEqual(['']);
    expect(fieldsOf(await patch(`/counterparties/${c.id}`, { brebKey: { keyValue: '3001112235' }, bankAccount: bankAccount() }))).toEqual(['brebKey']);
    expect(fieldsOf(await patch(`/counterparties/${c.id}`, { tags: ['A'], name: '' }))).toEqual(expect.arrayContaining(['tags.0', 'name']));
    // The service's rule: an ACH counterparty's holder travels in its account.
    expect(fieldsOf(await patch(`/counterparties/${c.id}`, { holderName: 'Otra Persona' }))).toEqual(['holderName']);
    expect((await get(`/counterparties/${c.id}`)).body.version).toBe(c.version);
  });

  it('DELETE answers the counterparty as it was; then it is gone (404, not listed)', async () => {
    const c = await created(ach());
    const r = await del(`/counterparties/${c.id}`);
    expect(r.status).toBe(200);
    expect(CounterpartySchema.parse(r.body)).toMatchObject({ id: c.id, name: c.name });
    expectError(await get(`/counterparties/${c.id}`), 404, 'COUNTERPARTY_NOT_FOUND');
    expectError(await del(`/counterparties/${c.id}`), 404, 'COUNTERPARTY_NOT_FOUND');
    expect((await get('/counterparties?limit=100')).body.items.map((x: { id: string }) => x.id)).not.toContain(c.id);
  });

  it('verify: 409 COUNTERPARTY_VERIFICATION_IN_PROGRESS while PENDING; a decided one verifies again (200)', async () => {
    const pending = await created(ach());
    expect(pending.verification.status).toBe('PENDING');
    expectError(await post(`/counterparties/${pending.id}/verify`, {}), 409, 'COUNTERPARTY_VERIFICATION_IN_PROGRESS');

    const failed = await created(await breb('3001112260', { holderName: 'Nombre Equivocado' }));
    expect(failed.verification.status).toBe('FAILED');
    const again = await post(`/counterparties/${failed.id}/verify`, {});
    expect(again.status).toBe(200);
    expect(CounterpartySchema.parse(again.body)).toMatchObject({ id: failed.id, verification: { status: 'FAILED', reasonCode: 'NAME_MISMATCH' } });
    expect(again.body.verification.requestedAt > failed.verification.requestedAt).toBe(true);
    expect(again.body.version).toBeGreaterThan(failed.version);
    // The body is an empty object: anything in it is refused.
    expect(fieldsOf(await post(`/counterparties/${failed.id}/verify`, { force: true }))).toEqual(['force']);
  });

  it('an unknown, a malformed and another company’s id all answer 404 COUNTERPARTY_NOT_FOUND on every route', async () => {
    const theirs = await created(ach({ tags: ['ajena'] }), other);
    for (const id of [theirs.id, `cpty_${'0'.repeat(24)}`, 'cpty_corto', 'cob_aaaaaaaaaaaaaaaaaaaaaaaa', 'CPTY_AAAAAAAAAAAAAAAAAAAAAAAA']) {
      expectError(await get(`/counterparties/${id}`), 404, 'COUNTERPARTY_NOT_FOUND');
      expectError(await patch(`/counterparties/${id}`, { name: 'Mía' }), 404, 'COUNTERPARTY_NOT_FOUND');
      expectError(await post(`/counterparties/${id}/verify`, {}), 404, 'COUNTERPARTY_NOT_FOUND');
      expectError(await del(`/counterparties/${id}`), 404, 'COUNTERPARTY_NOT_FOUND');
    }
    const mine = (await get('/counterparties?limit=100')).body.items.map((x: { id: string }) => x.id);
    expect(mine).not.toContain(theirs.id);
    expect((await get('/counterparties?tag=ajena')).body.items).toEqual([]);
    // Untouched: still theirs, as it was.
    expect((await get(`/counterparties/${theirs.id}`, other)).body).toEqual(theirs);
  });
});

describe('scopes and authentication', () => {
  it('a READ key reads but cannot create, change, delete or verify (403 INSUFFICIENT_SCOPE)', async () => {
    const c = await created(ach());
    const asRead = (method: 'post' | 'patch' | 'del', path: string, body?: unknown) => api[method](path, { token: co.readKey, body });
    for (const r of [
      await asRead('post', '/counterparties', ach()),
      await asRead('patch', `/counterparties/${c.id}`, { name: 'No' }),
      await asRead('del', `/counterparties/${c.id}`),
      await asRead('post', `/counterparties/${c.id}/verify`, {}),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ error: 'INSUFFICIENT_SCOPE', message: ERRORS.INSUFFICIENT_SCOPE.message, required: 'WRITE', granted: 'READ' });
    }
    expect((await get(`/counterparties/${c.id}`)).status).toBe(200);
    expect((await get(`/counterparties/${c.id}`)).body.name).toBe(c.name);
  });

  it('no key: 401 AUTH_REQUIRED', async () => {
    expectError(await api.get('/counterparties'), 401, 'AUTH_REQUIRED');
    expectError(await api.post('/counterparties', { body: ach() }), 401, 'AUTH_REQUIRED');
  });
});
