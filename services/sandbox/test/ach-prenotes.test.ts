import { createHash } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, eventually, type TestDatabase } from '@wallet/platform/testing';
import { startSandbox } from '../src/testing.js';
import { CallbackReceiver, SECRET, api, signatureValid, sleep, txId } from './support.js';

/**
 * ACH prenotes (docs/sandbox.md "ACH prenotes"): POST /ach/prenotes accepts a zero-value test entry
 * for an account; after a delay the rail ACCEPTS it or REJECTS it with an ACH return code, and says
 * so with a signed callback (the rails' signing, retries and `callbacks` fault). The default rules,
 * the per-account behaviour switch, forced outcomes and a restart, all through HTTP on real Postgres.
 */

const PRENOTE_MS = 250;
/**
 * The per-account behaviour's delay: long enough that six submissions, the 300 ms wait and six reads
 * finish inside it even on a loaded machine (at 600 ms a full run once read a prenote already settled).
 */
const BEHAVIOUR_MS = 4_000;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const REASONS = {
  R02: 'Cuenta cerrada',
  R03: 'Cuenta inexistente o no se pudo ubicar',
  R04: 'Número de cuenta inválido',
  R16: 'Cuenta bloqueada',
  R17: 'La identificación del titular no corresponde a la cuenta',
};
/** The draw the contract names, computed here independently: the first 4 bytes of sha256(prenoteId) / 2^32. */
const draw = (id: string) => createHash('sha256').update(id).digest().readUInt32BE(0) / 2 ** 32;

let accountSeq = 0;
/** An account number of its own for one test (behaviours are per account), never ending in 17. */
const freshAccount = () =>
  `55${String(process.pid).slice(-4).padStart(4, '0')}${String(Date.now() % 1_000_000).padStart(6, '0')}${(accountSeq++ % 90) + 10}`.replace(/17$/, '18');

describe('ACH prenotes', () => {
  let tdb: TestDatabase;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let receiver: CallbackReceiver;
  let sql: pg.Client;
  const call = api(() => sandbox.url);
  const env = { SANDBOX_ACH_PRENOTE_MS: String(PRENOTE_MS), SANDBOX_ACH_CONFIRM_MS: '200', SANDBOX_CALLBACK_SECRET: SECRET, SANDBOX_POLL_MS: '50' };
  const account = {
    bankCode: '1007',
    accountTypeId: 20,
    accountNumber: '12345678901',
    documentTypeId: 1,
    documentNumber: '1020304050',
    holderName: 'ANA GOMEZ',
  };
  const prenote = (name: string, o: Record<string, unknown> = {}) => ({
    prenoteId: txId(name),
    ...account,
    callbackUrl: receiver.urlFor(name),
    ...o,
  });
  const submit = async (body: Record<string, unknown>) => {
    const r = await call('POST', '/ach/prenotes', body);
    expect(r.status).toBe(202);
    return r;
  };
  const status = async (prenoteId: unknown) => (await call('GET', `/ach/prenotes/${String(prenoteId)}`)).body;
  const settled = (prenoteId: unknown, timeoutMs = 10_000) =>
    eventually(async () => {
      const s = await status(prenoteId);
      return s.status !== 'PENDING' ? s : undefined;
    }, timeoutMs);
  const behave = (accountNumber: string, b: unknown) => call('PUT', `/sandbox/ach/accounts/${accountNumber}/prenote-behaviour`, b);

  beforeAll(async () => {
    tdb = await createTestDatabase('sbx_prenotes');
    receiver = await CallbackReceiver.start();
    sandbox = await startSandbox({ databaseUrl: tdb.url, port: 0, env });
    sql = new pg.Client({ connectionString: tdb.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await sandbox?.stop();
    await receiver?.close();
    await tdb?.drop();
  });
  afterEach(async () => {
    receiver.respond = () => 200;
    await call('POST', '/sandbox/faults', { achRail: 'up', callbacks: 'up' });
  });

  it('accepts a prenote (202 PENDING), settles it ACCEPTED after SANDBOX_ACH_PRENOTE_MS and calls back, signed', async () => {
    const body = prenote('pn-ok');
    const started = Date.now();
    const r = await submit(body);
    expect(r.body).toEqual({ prenoteId: body.prenoteId, status: 'PENDING' });
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    expect(await status(body.prenoteId)).toEqual({ prenoteId: body.prenoteId, status: 'PENDING', submittedAt: expect.stringMatching(ISO) });

    const [cb] = await receiver.waitFor('pn-ok');
    expect(Date.now() - started).toBeGreaterThanOrEqual(PRENOTE_MS - 20);
    expect(signatureValid(cb!)).toBe(true);
    expect(signatureValid(cb!, 'another-secret-entirely')).toBe(false);
    expect(cb!.headers['content-type']).toBe('application/json');
    expect(cb!.body).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      type: 'ach.prenote',
      prenoteId: body.prenoteId,
      status: 'ACCEPTED',
      settledAt: expect.stringMatching(ISO),
    });
    const s = await status(body.prenoteId);
    expect(s).toEqual({ prenoteId: body.prenoteId, status: 'ACCEPTED', submittedAt: expect.stringMatching(ISO), settledAt: cb!.body.settledAt });
    expect(Date.parse(s.settledAt) - Date.parse(s.submittedAt)).toBeGreaterThanOrEqual(PRENOTE_MS);
    await sleep(300);
    expect(receiver.for('pn-ok')).toHaveLength(1);
  });

  it('rejects by the default rules: 0000000000 → R03, an account ending in 17 → R17', async () => {
    const missing = prenote('pn-r03', { accountNumber: '0000000000' });
    const mismatch = prenote('pn-r17', { accountNumber: '4455667717' });
    await submit(missing);
    await submit(mismatch);
    const [c03] = await receiver.waitFor('pn-r03');
    const [c17] = await receiver.waitFor('pn-r17');
    expect(c03!.body).toEqual({
      eventId: expect.any(String),
      type: 'ach.prenote',
      prenoteId: missing.prenoteId,
      status: 'REJECTED',
      reasonCode: 'R03',
      reason: REASONS.R03,
      settledAt: expect.stringMatching(ISO),
    });
    expect(c17!.body).toMatchObject({ status: 'REJECTED', reasonCode: 'R17', reason: REASONS.R17 });
    expect(signatureValid(c03!) && signatureValid(c17!)).toBe(true);
    expect(await status(missing.prenoteId)).toEqual({
      prenoteId: missing.prenoteId,
      status: 'REJECTED',
      reasonCode: 'R03',
      reason: REASONS.R03,
      submittedAt: expect.stringMatching(ISO),
      settledAt: c03!.body.settledAt,
    });
    // 17 elsewhere than at the end is no mismatch.
    const other = prenote('pn-17-inside', { accountNumber: '1717171710' });
    await submit(other);
    expect((await receiver.waitFor('pn-17-inside'))[0]!.body.status).toBe('ACCEPTED');
  });

  it('is idempotent on prenoteId: the same request answers 202 with the current status and Idempotent-Replayed; other account fields → 409', async () => {
    const body = prenote('pn-idem');
    await submit(body);
    const again = await submit(body);
    expect(again.body).toEqual({ prenoteId: body.prenoteId, status: 'PENDING' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // The same account written with numeric strings (and a number bank code) is the same request.
    const spelled = await submit({ ...body, accountTypeId: '20', documentTypeId: '1', bankCode: 1007 });
    expect(spelled.headers.get('idempotent-replayed')).toBe('true');

    await receiver.waitFor('pn-idem');
    const late = await submit(body);
    expect(late.body).toEqual({ prenoteId: body.prenoteId, status: 'ACCEPTED' });
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    await sleep(300);
    expect(receiver.for('pn-idem')).toHaveLength(1); // a repeat schedules nothing new

    for (const change of [
      { accountNumber: '12345678902' },
      { bankCode: '1051' },
      { accountTypeId: 21 },
      { documentTypeId: 4 },
      { documentNumber: '99887766' },
      { holderName: 'OTRA PERSONA' },
    ]) {
      const r = await call('POST', '/ach/prenotes', { ...body, ...change });
      expect([r.status, r.body.error]).toEqual([409, 'PRENOTE_ID_CONFLICT']);
      expect(r.body.message).toEqual(expect.any(String));
    }
    expect(await status(body.prenoteId)).toMatchObject({ status: 'ACCEPTED' });
    const { rows } = await sql.query('select account_number from sandbox.ach_prenotes where prenote_id = $1', [body.prenoteId]);
    expect(rows).toEqual([{ account_number: account.accountNumber }]);
  });

  it('answers 503 while the achRail fault is down, with the ACH rail’s body, and records nothing', async () => {
    await call('POST', '/sandbox/faults', { achRail: 'down' });
    const body = prenote('pn-down');
    const r = await call('POST', '/ach/prenotes', body);
    expect(r.status).toBe(503);
    const transfer = await call('POST', '/ach/transfers', { transactionId: txId('pn-down-tx'), amountCents: 1_000, ...account, callbackUrl: body.callbackUrl });
    expect(transfer.status).toBe(503);
    expect(r.body).toEqual(transfer.body);
    expect(r.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: 'La red ACH no está disponible.' });
    expect((await call('GET', `/ach/prenotes/${body.prenoteId}`)).status).toBe(404);
    await call('POST', '/sandbox/faults', { achRail: 'up' });
    expect((await submit(body)).headers.get('idempotent-replayed')).toBeNull();
  });

  it('a behaviour with rate 1 rejects every prenote of the account with its code, after its delay', async () => {
    const acct = freshAccount();
    const put = await behave(acct, { delayMs: BEHAVIOUR_MS, rejectionRate: 1, reasonCode: 'R16' });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ accountNumber: acct, delayMs: BEHAVIOUR_MS, rejectionRate: 1, reasonCode: 'R16', updatedAt: expect.stringMatching(ISO) });
    expect(await call('GET', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).toMatchObject({ status: 200, body: put.body });

    const bodies = Array.from({ length: 6 }, () => prenote('pn-rate1', { accountNumber: acct }));
    for (const b of bodies) await submit(b);
    await sleep(300); // the default delay has passed, the behaviour's has not (it is counted from each submission)
    for (const b of bodies) expect((await status(b.prenoteId)).status).toBe('PENDING');
    const cbs = await receiver.waitFor('pn-rate1', bodies.length, BEHAVIOUR_MS + 10_000);
    expect(cbs.map((c) => [c.body.status, c.body.reasonCode, c.body.reason])).toEqual(bodies.map(() => ['REJECTED', 'R16', REASONS.R16]));
    for (const b of bodies) {
      const s = await status(b.prenoteId);
      expect(s).toMatchObject({ status: 'REJECTED', reasonCode: 'R16', reason: REASONS.R16 });
      expect(Date.parse(s.settledAt) - Date.parse(s.submittedAt)).toBeGreaterThanOrEqual(BEHAVIOUR_MS);
    }
  });

  it('a behaviour with rate 0 accepts every prenote (the default rules do not apply); without reasonCode it rejects with R03', async () => {
    const acct = '9876543217'; // R17 by the default rules
    await behave(acct, { delayMs: 0, rejectionRate: 0 });
    const accepted = Array.from({ length: 5 }, () => prenote('pn-rate0', { accountNumber: acct }));
    for (const b of accepted) await submit(b);
    const cbs = await receiver.waitFor('pn-rate0', accepted.length);
    expect(cbs.every((c) => c.body.status === 'ACCEPTED' && c.body.reasonCode === undefined)).toBe(true);

    const put = await behave(acct, { delayMs: 0, rejectionRate: 1 });
    expect(put.body.reasonCode).toBe('R03');
    const rejected = prenote('pn-rate1-default', { accountNumber: acct });
    await submit(rejected);
    expect((await receiver.waitFor('pn-rate1-default'))[0]!.body).toMatchObject({ status: 'REJECTED', reasonCode: 'R03', reason: REASONS.R03 });
    expect((await call('DELETE', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).body).toEqual({ accountNumber: acct, deleted: true });
  });

  it('decides by a deterministic draw from the prenote id: below the rate is rejected, the same id always gets the same outcome', async () => {
    const acct = freshAccount();
    await behave(acct, { delayMs: 0, rejectionRate: 0.5, reasonCode: 'R02' });
    const bodies = Array.from({ length: 16 }, () => prenote('pn-draw', { accountNumber: acct }));
    const expected = bodies.map((b) => (draw(b.prenoteId) < 0.5 ? 'REJECTED' : 'ACCEPTED'));
    expect(new Set(expected).size).toBe(2); // both outcomes are exercised (16 ids: all on one side is 1 in 32,768)
    for (const b of bodies) await submit(b);
    const outcomes = await Promise.all(bodies.map((b) => settled(b.prenoteId)));
    expect(outcomes.map((o) => o.status)).toEqual(expected);
    expect(outcomes.filter((o) => o.status === 'REJECTED').every((o) => o.reasonCode === 'R02')).toBe(true);

    // The same ids on another account with the same behaviour: the same outcomes.
    const twin = freshAccount();
    await behave(twin, { delayMs: 0, rejectionRate: 0.5, reasonCode: 'R02' });
    // (Their rows and callbacks removed first, so the ids are new to the sandbox.)
    await sql.query('delete from sandbox.ach_prenotes where prenote_id = any($1)', [bodies.map((b) => b.prenoteId)]);
    await sql.query('delete from sandbox.callbacks where transaction_id = any($1)', [bodies.map((b) => `ach-prenote/${b.prenoteId}`)]);
    for (const b of bodies) await submit({ ...b, accountNumber: twin, callbackUrl: receiver.urlFor('pn-draw-twin') });
    const again = await Promise.all(bodies.map((b) => settled(b.prenoteId)));
    expect(again.map((o) => o.status)).toEqual(expected);
  });

  it('the behaviour in force at submission decides; GET 404 without one; DELETE returns to the default rules', async () => {
    const acct = freshAccount();
    const missing = await call('GET', `/sandbox/ach/accounts/${acct}/prenote-behaviour`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'BEHAVIOUR_NOT_FOUND', message: expect.any(String) });
    expect((await call('DELETE', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).body).toEqual({ accountNumber: acct, deleted: false });

    await behave(acct, { delayMs: 800, rejectionRate: 1, reasonCode: 'R04' });
    const before = prenote('pn-in-force', { accountNumber: acct });
    await submit(before);
    expect((await call('DELETE', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).body).toEqual({ accountNumber: acct, deleted: true });
    expect((await call('GET', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).status).toBe(404);
    const after = prenote('pn-after-delete', { accountNumber: acct });
    await submit(after);
    expect(await settled(after.prenoteId)).toMatchObject({ status: 'ACCEPTED' }); // default rules, default delay
    expect(await status(before.prenoteId)).toMatchObject({ status: 'PENDING' });
    expect(await settled(before.prenoteId)).toMatchObject({ status: 'REJECTED', reasonCode: 'R04', reason: REASONS.R04 });
    // A PUT replaces the behaviour.
    await behave(acct, { delayMs: 10, rejectionRate: 0 });
    const replaced = await behave(acct, { delayMs: 20, rejectionRate: 0.25, reasonCode: 'R17' });
    expect((await call('GET', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).body).toEqual(replaced.body);
    expect(replaced.body).toMatchObject({ delayMs: 20, rejectionRate: 0.25, reasonCode: 'R17' });
  });

  it('refuses a bad behaviour with 400 INVALID_REQUEST naming the field', async () => {
    const acct = freshAccount();
    const ok = { delayMs: 100, rejectionRate: 0.5, reasonCode: 'R02' };
    const cases: Array<[unknown, string]> = [
      [{ ...ok, delayMs: -1 }, 'delayMs'],
      [{ ...ok, delayMs: 600_001 }, 'delayMs'],
      [{ ...ok, delayMs: 1.5 }, 'delayMs'],
      [{ ...ok, delayMs: '100' }, 'delayMs'],
      [{ ...ok, delayMs: 1e308 }, 'delayMs'],
      [{ ...ok, rejectionRate: 1.01 }, 'rejectionRate'],
      [{ ...ok, rejectionRate: -0.1 }, 'rejectionRate'],
      [{ ...ok, rejectionRate: '0.5' }, 'rejectionRate'],
      [{ ...ok, rejectionRate: null }, 'rejectionRate'],
      [{ ...ok, reasonCode: 'R99' }, 'reasonCode'],
      [{ ...ok, reasonCode: 'r02' }, 'reasonCode'],
      [{ rejectionRate: 0.5 }, 'delayMs'],
      [{ delayMs: 5 }, 'rejectionRate'],
      [{ ...ok, extra: true }, 'extra'],
      [[], ''],
    ];
    for (const [body, field] of cases) {
      const r = await behave(acct, body);
      expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);
      expect(r.body.message).toBe('La solicitud no es válida.');
      expect(r.body.details.fields.map((f: { path: string }) => f.path)).toContain(field);
    }
    const empty = await behave(acct, undefined);
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ error: 'INVALID_REQUEST', details: { fields: [{ path: '' }] } }); // no body at all
    const malformed = await call('PUT', `/sandbox/ach/accounts/${acct}/prenote-behaviour`, '{"delayMs": 1,');
    expect(malformed).toMatchObject({ status: 400, body: { error: 'INVALID_REQUEST' } });
    const badPath = await behave('12-34', ok);
    expect([badPath.status, badPath.body.details.fields[0].path]).toEqual([400, 'path.accountNumber']);
    expect((await call('GET', '/sandbox/ach/accounts/abc/prenote-behaviour')).status).toBe(400);
    expect((await call('GET', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).status).toBe(404); // nothing was stored
    // The edges are allowed.
    expect((await behave(acct, { delayMs: 600_000, rejectionRate: 0 })).status).toBe(200);
    expect((await behave(acct, { delayMs: 0, rejectionRate: 1, reasonCode: 'R17' })).status).toBe(200);
  });

  it('GET of an unknown prenote is 404 TRANSFER_NOT_FOUND', async () => {
    const r = await call('GET', '/ach/prenotes/unknown-prenote');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'TRANSFER_NOT_FOUND', message: expect.any(String) });
    const transferMissing = await call('GET', '/ach/transfers/unknown-prenote');
    expect(r.body.error).toBe(transferMissing.body.error);
  });

  it('forces an outcome: accept and reject (with a code, else R03) → 200 and the callback at once; 404 unknown; 409 already settled', async () => {
    const acct = freshAccount();
    await behave(acct, { delayMs: 600_000, rejectionRate: 0 });
    const a = prenote('pn-force-accept', { accountNumber: acct });
    const r = prenote('pn-force-reject', { accountNumber: acct });
    const r3 = prenote('pn-force-reject-default', { accountNumber: acct });
    for (const b of [a, r, r3]) await submit(b);

    const accepted = await call('POST', `/sandbox/ach/prenotes/${a.prenoteId}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      prenoteId: a.prenoteId,
      status: 'ACCEPTED',
      submittedAt: expect.stringMatching(ISO),
      settledAt: expect.stringMatching(ISO),
    });
    const [ca] = await receiver.waitFor('pn-force-accept', 1, 2_000);
    expect(ca!.body).toMatchObject({ type: 'ach.prenote', prenoteId: a.prenoteId, status: 'ACCEPTED', settledAt: accepted.body.settledAt });
    expect(signatureValid(ca!)).toBe(true);

    const rejected = await call('POST', `/sandbox/ach/prenotes/${r.prenoteId}/reject`, { reasonCode: 'R02' });
    expect(rejected.body).toMatchObject({ status: 'REJECTED', reasonCode: 'R02', reason: REASONS.R02 });
    expect((await receiver.waitFor('pn-force-reject', 1, 2_000))[0]!.body).toMatchObject({ status: 'REJECTED', reasonCode: 'R02', reason: REASONS.R02 });
    const byDefault = await call('POST', `/sandbox/ach/prenotes/${r3.prenoteId}/reject`);
    expect(byDefault.body).toMatchObject({ status: 'REJECTED', reasonCode: 'R03', reason: REASONS.R03 });

    const twice = await call('POST', `/sandbox/ach/prenotes/${a.prenoteId}/reject`, { reasonCode: 'R16' });
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ error: 'OUTCOME_ALREADY_SET', details: { status: 'ACCEPTED' } });
    expect((await call('POST', `/sandbox/ach/prenotes/${r.prenoteId}/accept`)).body.error).toBe('OUTCOME_ALREADY_SET');
    expect(await status(a.prenoteId)).toMatchObject({ status: 'ACCEPTED' });

    expect(await call('POST', '/sandbox/ach/prenotes/nope/accept')).toMatchObject({ status: 404, body: { error: 'TRANSFER_NOT_FOUND' } });
    expect(await call('POST', '/sandbox/ach/prenotes/nope/reject', { reasonCode: 'R02' })).toMatchObject({ status: 404 });
    const pending = prenote('pn-force-bad', { accountNumber: acct });
    await submit(pending);
    const bad = await call('POST', `/sandbox/ach/prenotes/${pending.prenoteId}/reject`, { reasonCode: 'R99' });
    expect([bad.status, bad.body.details.fields[0].path]).toEqual([400, 'reasonCode']);
    expect((await call('POST', `/sandbox/ach/prenotes/${pending.prenoteId}/reject`, { reasonCode: 'R02', errorMessage: 'x' })).status).toBe(400);
    expect(await status(pending.prenoteId)).toMatchObject({ status: 'PENDING' });
    await sleep(200);
    expect(receiver.for('pn-force-accept')).toHaveLength(1);
  });

  it('a forced outcome racing the scheduler: exactly one wins, one callback per prenote', async () => {
    const acct = freshAccount();
    await behave(acct, { delayMs: 0, rejectionRate: 1, reasonCode: 'R16' });
    const bodies = Array.from({ length: 10 }, () => prenote('pn-race', { accountNumber: acct }));
    await Promise.all(bodies.map((b) => submit(b)));
    const forced = await Promise.all(bodies.map((b) => call('POST', `/sandbox/ach/prenotes/${b.prenoteId}/accept`)));
    expect(forced.every((f) => f.status === 200 || (f.status === 409 && f.body.error === 'OUTCOME_ALREADY_SET'))).toBe(true);
    await receiver.waitFor('pn-race', bodies.length);
    await sleep(300);
    const cbs = receiver.for('pn-race');
    expect(cbs).toHaveLength(bodies.length);
    for (const [i, b] of bodies.entries()) {
      const s = await status(b.prenoteId);
      expect(s.status).toBe(forced[i]!.status === 200 ? 'ACCEPTED' : 'REJECTED');
      expect(cbs.find((c) => c.body.prenoteId === b.prenoteId)!.body.status).toBe(s.status);
    }
  });

  it('the callback goes through the rails’ machinery: retried with the same eventId and bytes, held by the callbacks fault, redelivered', async () => {
    receiver.respond = ({ path, nth }) => (path.endsWith('/pn-retry') && nth === 1 ? 500 : 200);
    const body = prenote('pn-retry');
    await submit(body);
    const all = await receiver.waitFor('pn-retry', 2, 10_000);
    expect(all.map((c) => c.status)).toEqual([500, 200]);
    expect(all[0]!.raw).toBe(all[1]!.raw);
    expect(all.every((c) => signatureValid(c))).toBe(true);
    expect(all[1]!.at - all[0]!.at).toBeGreaterThanOrEqual(900); // SANDBOX_CALLBACK_RETRY_BASE_MS

    const again = await call('POST', `/sandbox/ach/prenotes/${body.prenoteId}/redeliver`);
    expect(again).toMatchObject({ status: 200, body: { eventId: all[0]!.body.eventId, prenoteId: body.prenoteId, delivered: true } });
    expect((await receiver.waitFor('pn-retry', 3))[2]!.raw).toBe(all[0]!.raw);

    await call('POST', '/sandbox/faults', { callbacks: 'down' });
    const held = prenote('pn-held');
    await submit(held);
    expect(await settled(held.prenoteId)).toMatchObject({ status: 'ACCEPTED' }); // recorded even though nobody is told
    await sleep(300);
    expect(receiver.for('pn-held')).toHaveLength(0);
    await call('POST', '/sandbox/faults', { callbacks: 'up' });
    expect((await receiver.waitFor('pn-held', 1, 2_000))[0]!.body).toMatchObject({ prenoteId: held.prenoteId, status: 'ACCEPTED' });

    const pending = prenote('pn-no-callback', { accountNumber: freshAccount() });
    await behave(pending.accountNumber, { delayMs: 600_000, rejectionRate: 0 });
    await submit(pending);
    expect(await call('POST', `/sandbox/ach/prenotes/${pending.prenoteId}/redeliver`)).toMatchObject({ status: 409, body: { error: 'NO_CALLBACK_YET' } });
    expect(await call('POST', '/sandbox/ach/prenotes/nope/redeliver')).toMatchObject({ status: 404, body: { error: 'TRANSFER_NOT_FOUND' } });
  });

  it('a prenote may reuse a transfer’s id: each keeps its own callback, and no prenote is in the ACH settlement report', async () => {
    const id = txId('shared');
    const transfer = await call('POST', '/ach/transfers', { transactionId: id, amountCents: 7_000, ...account, callbackUrl: receiver.urlFor('shared-tx') });
    expect(transfer.status).toBe(202);
    await submit({ prenoteId: id, ...account, callbackUrl: receiver.urlFor('shared-pn') });
    const [tx] = await receiver.waitFor('shared-tx');
    const [pn] = await receiver.waitFor('shared-pn');
    expect(tx!.body).toMatchObject({ transactionId: id, rail: 'ACH', status: 'COMPLETED' });
    expect(pn!.body).toMatchObject({ type: 'ach.prenote', prenoteId: id, status: 'ACCEPTED' });
    // The generic redeliver is the transfer's.
    const redeliver = await call('POST', `/sandbox/callbacks/${id}/redeliver`);
    expect(redeliver.body.eventId).toBe(tx!.body.eventId);

    const today = new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10);
    const report = await fetch(`${sandbox.url}/sandbox/reports/ach/${today}.csv`).then((r) => r.text());
    const lines = report.trim().split('\r\n');
    expect(lines.filter((l) => l.includes(`,${id},`))).toHaveLength(1); // the transfer's line only
    expect(lines.filter((l) => /,0,0,/.test(l) && !l.startsWith('TRAILER'))).toEqual([]); // no zero-value line
  });

  it('refuses bad input with 400 INVALID_REQUEST (415, 413 as every sandbox body)', async () => {
    const ok = prenote('pn-bad');
    const without = (f: string) => Object.fromEntries(Object.entries(ok).filter(([k]) => k !== f));
    const cases: Array<[unknown, string]> = [
      [without('prenoteId'), 'prenoteId'],
      [without('bankCode'), 'bankCode'],
      [without('accountTypeId'), 'accountTypeId'],
      [without('accountNumber'), 'accountNumber'],
      [without('documentTypeId'), 'documentTypeId'],
      [without('documentNumber'), 'documentNumber'],
      [without('callbackUrl'), 'callbackUrl'],
      [{ ...ok, prenoteId: '' }, 'prenoteId'],
      [{ ...ok, prenoteId: 'a'.repeat(65) }, 'prenoteId'],
      [{ ...ok, prenoteId: 'con espacio' }, 'prenoteId'],
      [{ ...ok, prenoteId: 12345 }, 'prenoteId'],
      [{ ...ok, accountNumber: 12345678 }, 'accountNumber'],
      [{ ...ok, accountNumber: '9'.repeat(10_000) }, 'accountNumber'],
      [{ ...ok, accountNumber: '12-34' }, 'accountNumber'],
      [{ ...ok, accountTypeId: 23 }, 'accountTypeId'],
      [{ ...ok, accountTypeId: 1e300 }, 'accountTypeId'],
      [{ ...ok, documentTypeId: 2 }, 'documentTypeId'],
      [{ ...ok, documentNumber: 'x'.repeat(21) }, 'documentNumber'],
      [{ ...ok, bankCode: 'BANCO' }, 'bankCode'],
      [{ ...ok, bankCode: Number.MAX_VALUE }, 'bankCode'],
      [{ ...ok, holderName: '' }, 'holderName'],
      [{ ...ok, holderName: 'N'.repeat(151) }, 'holderName'],
      [{ ...ok, holderName: 7 }, 'holderName'],
      [{ ...ok, callbackUrl: 'ftp://example.com/x' }, 'callbackUrl'],
      [{ ...ok, callbackUrl: 'not a url' }, 'callbackUrl'],
      [{ ...ok, callbackUrl: `http://127.0.0.1/${'a'.repeat(3_000)}` }, 'callbackUrl'],
      ['"a string"', ''],
      [[ok], ''],
      ['null', ''],
    ];
    for (const [body, field] of cases) {
      const r = await call('POST', '/ach/prenotes', body);
      expect([r.status, r.body.error]).toEqual([400, 'INVALID_REQUEST']);
      expect(r.body.details.fields.map((f: { path: string }) => f.path)).toContain(field);
    }
    const empty = await call('POST', '/ach/prenotes');
    expect([empty.status, empty.body.error]).toEqual([400, 'INVALID_REQUEST']);
    const malformed = await call('POST', '/ach/prenotes', '{"prenoteId": "x",');
    expect(malformed).toMatchObject({
      status: 400,
      body: { error: 'INVALID_REQUEST', details: { fields: [{ path: '', message: 'El cuerpo no es JSON válido.' }] } },
    });
    const text = await call('POST', '/ach/prenotes', JSON.stringify(ok), { 'content-type': 'text/plain' });
    expect(text).toMatchObject({ status: 415, body: { error: 'UNSUPPORTED_MEDIA_TYPE' } });
    const huge = await call('POST', '/ach/prenotes', { ...ok, holderName: 'N'.repeat(300 * 1024) });
    expect(huge).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
    expect((await call('GET', `/ach/prenotes/${ok.prenoteId}`)).status).toBe(404); // nothing was recorded
    expect((await call('PUT', '/ach/prenotes', ok)).status).toBe(405);

    // holderName is optional; an unknown field is ignored as on the transfers.
    const minimal = await submit({ ...without('holderName'), prenoteId: txId('pn-minimal'), note: 'ignored' });
    expect(minimal.body.status).toBe('PENDING');
  });

  it('loses nothing across a restart: a prenote pending at stop is settled and called back by the next instance; behaviours are kept', async () => {
    const slowEnv = { ...env, SANDBOX_ACH_PRENOTE_MS: '1000' };
    const acct = freshAccount();
    await behave(acct, { delayMs: 1_000, rejectionRate: 1, reasonCode: 'R16' });
    await sandbox.stop(); // one instance at a time in this test
    sandbox = await startSandbox({ databaseUrl: tdb.url, env: slowEnv });
    const plain = prenote('pn-restart');
    const behaved = prenote('pn-restart-behaviour', { accountNumber: acct });
    await submit(plain);
    await submit(behaved);
    await sandbox.stop(); // both still pending
    await sleep(1_200); // and due while no sandbox runs
    expect(receiver.for('pn-restart')).toHaveLength(0);
    expect(
      (await sql.query(`select status from sandbox.ach_prenotes where prenote_id = any($1)`, [[plain.prenoteId, behaved.prenoteId]])).rows.map((r) => r.status),
    ).toEqual(['PENDING', 'PENDING']);

    sandbox = await startSandbox({ databaseUrl: tdb.url, env });
    const [cb] = await receiver.waitFor('pn-restart');
    expect(cb!.body).toMatchObject({ type: 'ach.prenote', prenoteId: plain.prenoteId, status: 'ACCEPTED' });
    expect(signatureValid(cb!)).toBe(true);
    const [cbb] = await receiver.waitFor('pn-restart-behaviour');
    expect(cbb!.body).toMatchObject({ prenoteId: behaved.prenoteId, status: 'REJECTED', reasonCode: 'R16' });
    expect((await call('GET', `/sandbox/ach/accounts/${acct}/prenote-behaviour`)).body).toMatchObject({ delayMs: 1_000, rejectionRate: 1, reasonCode: 'R16' });
    await sleep(300);
    expect(receiver.for('pn-restart')).toHaveLength(1);
  });
});
