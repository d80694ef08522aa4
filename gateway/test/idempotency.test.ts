import { randomUUID } from 'node:crypto';
import { createLogger, Database, ERRORS, SecretBox } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { idempotencyRequestHash } from '../src/http/idempotency-key.js';
import { IdempotencyKeyStore } from '../src/persistence/idempotency-key.store.js';
import { gatewayMigrations } from '../src/persistence/migrations/index.js';
import { startStack, type Stack } from './support/stack.js';
import { adminOf, client, type Client, type Reply } from './support/http.js';
import { sql } from './support/sql.js';
import { SANDBOX_ACH_ACCOUNT } from '@wallet/platform/testing';

/** `Idempotency-Key` on the creating POSTs, through the real gateway, services and sandbox. */
let stack: Stack;
let api: Client;
let admin: ReturnType<typeof adminOf>;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_FINANCIAL: '100000', RATE_LIMIT_COLLECT_KEY_WRITES: '100000' });
  api = client(stack.gw.url);
  admin = adminOf(api, stack.gw.adminToken);
}, 60_000);
afterAll(() => stack?.stop());

async function company(achCents = 10_000_000) {
  const c = await admin.createCompany({ taxRegime: 'SIMPLE' });
  const key = (await admin.issueKey(c.id, 'WRITE')).key as string;
  if (achCents > 0) expect((await admin.credit(c.id, 'ACH', achCents, `seed-${randomUUID()}`)).status).toBe(201);
  return { id: c.id as string, key };
}
type Co = Awaited<ReturnType<typeof company>>;

const achBody = (amount: number, extra: Record<string, unknown> = {}) => ({
  amount,
  destination: {
    bankAccount: SANDBOX_ACH_ACCOUNT,
  },
  description: 'Pago proveedor',
  ...extra,
});
const post = (co: Co, path: string, body: unknown, idemKey?: string, headers: Record<string, string> = {}) =>
  api.post(path, { token: co.key, body, headers: idemKey === undefined ? headers : { ...headers, 'Idempotency-Key': idemKey } });
const send = (co: Co, body: unknown, idemKey?: string) => post(co, '/transfers/send', body, idemKey);
const createKey = (co: Co, body: unknown, idemKey?: string) => post(co, '/breb/collect-keys', body, idemKey);
const replayed = (r: Reply) => r.headers.get('idempotent-replayed');
const transfersOf = async (co: Co) =>
  Number((await sql(stack.db.url, 'select count(*)::int as n from transfer.transfers where company_id = $1', [co.id]))[0].n);
const rowOf = async (co: Co, key: string) =>
  (
    await sql(
      stack.db.url,
      `select state, status_code, extract(epoch from expires_at - created_at)::int as ttl
  from gateway.idempotency_keys where company_id = $1 and key = $2`,
      [co.id, key],
    )
  )[0];

function expectError(r: Reply, status: number, code: keyof typeof ERRORS) {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code });
  expect(r.body.message).toBe(ERRORS[code].message);
}

describe('Idempotency-Key: replay', () => {
  it('a send replays the first answer (status, body, bytes) with Idempotent-Replayed: true; one transfer', async () => {
    const co = await company();
    const body = achBody(10_000);
    const first = await send(co, body, 'send-1');
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'PENDING', rail: 'ACH', amount: 10_000 });
    expect(replayed(first)).toBeNull();
    const again = await send(co, body, 'send-1');
    expect(again.status).toBe(201);
    expect(replayed(again)).toBe('true');
    expect(again.text).toBe(first.text);
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(again.headers.get('ratelimit-limit')).not.toBeNull();
    // Same JSON with other key order and whitespace is the same request.
    const { description, amount, destination } = body;
    const reordered = await api.post('/transfers/send', {
      token: co.key,
      raw: JSON.stringify({ destination, description, amount }, null, 2),
      headers: { 'content-type': 'application/json', 'Idempotency-Key': 'send-1' },
    });
    expect(reordered.status).toBe(201);
    expect(replayed(reordered)).toBe('true');
    expect(reordered.body.id).toBe(first.body.id);
    expect(await transfersOf(co)).toBe(1);
    expect(await rowOf(co, 'send-1')).toEqual({ state: 'DONE', status_code: 201, ttl: 2_592_000 });
    // The stored answer is sealed (an answer may carry a secret shown once): no clear text at rest.
    const [stored] = await sql(stack.db.url, 'select response_body from gateway.idempotency_keys where company_id = $1 and key = $2', [co.id, 'send-1']);
    expect(stored!.response_body).toMatch(/^v1\./);
    expect(stored!.response_body).not.toContain(first.body.id);
    // The request hash (over a body holding an account number) is kept as a keyed fingerprint only.
    const [hash] = await sql(stack.db.url, 'select request_hash from gateway.idempotency_keys where company_id = $1 and key = $2', [co.id, 'send-1']);
    expect(hash!.request_hash).toMatch(/^hm1:[0-9a-f]{64}$/);
    expect(hash!.request_hash).not.toContain(idempotencyRequestHash({ method: 'POST', routeTemplate: '/transfers/send', params: {}, body }));
  });

  it('a PSE deposit, a collect key and a QR replay too, each keeping its original status', async () => {
    const co = await company(0);
    const dep = {
      amountCents: 5_000_000,
      payerDocumentTypeId: 1,
      payerDocumentNumber: '52123456',
      payerFirstName: 'Marta',
      payerLastName: 'Ríos',
      payerEmail: 'marta@example.com',
    };
    const d1 = await post(co, '/deposits/pse', dep, 'dep-1');
    expect(d1.status).toBe(201);
    const d2 = await post(co, '/deposits/pse', dep, 'dep-1');
    expect([d2.status, replayed(d2), d2.text]).toEqual([201, 'true', d1.text]);

    const k1 = await createKey(co, { externalId: 'cust-1', name: 'Cliente Uno' }, 'ck-1');
    expect(k1.status).toBe(201);
    // A second key for the same customer answers 200 (the live key) under another Idempotency-Key ...
    const k2 = await createKey(co, { externalId: 'cust-1', name: 'Cliente Uno' }, 'ck-2');
    expect([k2.status, replayed(k2), k2.body.id]).toEqual([200, null, k1.body.id]);
    // ... while the first key still replays its 201.
    const k1again = await createKey(co, { externalId: 'cust-1', name: 'Cliente Uno' }, 'ck-1');
    expect([k1again.status, replayed(k1again), k1again.text]).toEqual([201, 'true', k1.text]);

    const q1 = await post(co, `/breb/collect-keys/${k1.body.id}/qr`, undefined, 'qr-1');
    expect(q1.status).toBe(201);
    const reused = await post(co, `/breb/collect-keys/${k1.body.id}/qr`, undefined, 'qr-2');
    expect([reused.status, reused.body.reused]).toEqual([200, true]);
    const q1again = await post(co, `/breb/collect-keys/${k1.body.id}/qr`, undefined, 'qr-1');
    expect([q1again.status, replayed(q1again), q1again.text]).toEqual([201, 'true', q1.text]);
  });

  it('a webhook endpoint replays with the same signing secret (sealed at rest), one endpoint', async () => {
    const co = await company();
    const body = { url: 'https://hooks.example.co/wallet', events: ['transfer.completed'] };
    const post = () => api.post('/webhooks/endpoints', { token: co.key, body, headers: { 'Idempotency-Key': 'wh-1' } });
    const first = await post();
    expect(first.status).toBe(201);
    expect(first.body.secret).toMatch(/^whsec_/);
    const again = await post();
    expect([again.status, replayed(again), again.body.id, again.body.secret]).toEqual([201, 'true', first.body.id, first.body.secret]);
    expect((await api.get('/webhooks/endpoints', { token: co.key })).body.items).toHaveLength(1);
    const [stored] = await sql(stack.db.url, 'select response_body from gateway.idempotency_keys where company_id = $1 and key = $2', [co.id, 'wh-1']);
    expect(stored!.response_body).not.toContain(first.body.secret);
  });

  it('without the header nothing is stored and nothing changes', async () => {
    const co = await company();
    const r = await send(co, achBody(10_000));
    expect(r.status).toBe(201);
    expect(replayed(r)).toBeNull();
    expect(await sql(stack.db.url, 'select 1 from gateway.idempotency_keys where company_id = $1', [co.id])).toEqual([]);
  });
});

describe('Idempotency-Key: conflicts', () => {
  it('the same key with another body, or on another route → 409 IDEMPOTENCY_KEY_REUSED; nothing created', async () => {
    const co = await company();
    expect((await send(co, achBody(10_000), 'reuse-1')).status).toBe(201);
    expectError(await send(co, achBody(10_001), 'reuse-1'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expectError(await send(co, { ...achBody(10_000), description: 'Otra' }, 'reuse-1'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expectError(await createKey(co, { externalId: 'cust-x', name: 'X' }, 'reuse-1'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(await transfersOf(co)).toBe(1);
    const keys = await api.get('/breb/collect-keys', { token: co.key });
    expect(keys.body.items).toEqual([]);
  });

  it('10 parallel identical sends with one key → exactly one transfer; every one answers it, the others as replays (no 409 IN_USE)', async () => {
    const co = await company();
    const body = achBody(20_000);
    const results = await Promise.all(Array.from({ length: 10 }, () => send(co, body, 'race-1')));
    // The send is bound to its key in the transfer service: duplicates run at once and wait there for the first.
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    const created = results.filter((r) => replayed(r) === null);
    expect(created).toHaveLength(1);
    for (const r of results) expect(r.body.id).toBe(created[0]!.body.id);
    expect(await transfersOf(co)).toBe(1);
    // Once done, every retry replays.
    const after = await send(co, body, 'race-1');
    expect([after.status, replayed(after), after.body.id]).toEqual([201, 'true', created[0]!.body.id]);
  });

  // The row is written as one stored before fingerprints (an unkeyed hash): it still holds its key.
  it('a request still in flight holds the key (409 IN_USE); a claim past its lock (crashed replica) is taken over', async () => {
    const co = await company(0);
    const body = { externalId: 'cust-busy', name: 'Cliente' };
    const hash = idempotencyRequestHash({ method: 'POST', routeTemplate: '/breb/collect-keys', params: {}, body });
    await sql(
      stack.db.url,
      `insert into gateway.idempotency_keys (company_id, key, method, path, request_hash, state, claim_id, locked_until, expires_at)
      values ($1, 'busy-1', 'POST', '/breb/collect-keys', $2, 'IN_FLIGHT', $3, now() + interval '60 seconds', now() + interval '1 day')`,
      [co.id, hash, randomUUID()],
    );
    const busy = await createKey(co, body, 'busy-1');
    expectError(busy, 409, 'IDEMPOTENCY_KEY_IN_USE');
    expect(busy.headers.get('retry-after')).toBe('1');
    // Another body under a busy key is a reuse, not a wait.
    expectError(await createKey(co, { ...body, name: 'Otro' }, 'busy-1'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect((await api.get('/breb/collect-keys', { token: co.key })).body.items).toEqual([]);
    await sql(stack.db.url, `update gateway.idempotency_keys set locked_until = now() - interval '1 second' where company_id = $1 and key = 'busy-1'`, [co.id]);
    const taken = await createKey(co, body, 'busy-1');
    expect([taken.status, replayed(taken)]).toEqual([201, null]);
    expect(await rowOf(co, 'busy-1')).toMatchObject({ state: 'DONE', status_code: 201 });
  });

  it('a send: the same request runs at once over an IN_FLIGHT claim (its gateway may have died), another body is still a reuse', async () => {
    const co = await company();
    const body = achBody(30_000);
    // Left by a gateway killed mid-request, stored before fingerprints (an unkeyed hash): locked for another minute.
    const hash = idempotencyRequestHash({ method: 'POST', routeTemplate: '/transfers/send', params: {}, body });
    await sql(
      stack.db.url,
      `insert into gateway.idempotency_keys (company_id, key, method, path, request_hash, state, claim_id, locked_until, expires_at)
      values ($1, 'busy-send', 'POST', '/transfers/send', $2, 'IN_FLIGHT', $3, now() + interval '60 seconds', now() + interval '1 day')`,
      [co.id, hash, randomUUID()],
    );
    expectError(await send(co, achBody(30_001), 'busy-send'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(await transfersOf(co)).toBe(0);
    // The dead request never reached the transfer service: this one makes the transfer.
    const taken = await send(co, body, 'busy-send');
    expect([taken.status, replayed(taken)]).toEqual([201, null]);
    expect(await rowOf(co, 'busy-send')).toMatchObject({ state: 'DONE', status_code: 201 });
    const again = await send(co, body, 'busy-send');
    expect([again.status, replayed(again), again.body.id]).toEqual([201, 'true', taken.body.id]);
    expect(await transfersOf(co)).toBe(1);
  });

  it('a send with an unknown outcome (503: transfer service unreachable) keeps the key bound to its body; the same body runs again at once', async () => {
    const co = await company();
    const body = achBody(40_000);
    const cut = client((await stack.extraGateway({ TRANSFER_GRPC_ADDR: '127.0.0.1:1', RATE_LIMIT_FINANCIAL: '100000' })).url);
    const failed = await cut.post('/transfers/send', { token: co.key, body, headers: { 'Idempotency-Key': 'unknown-1' } });
    expectError(failed, 503, 'SERVICE_UNAVAILABLE');
    // Not dropped: bound to this request (UNKNOWN), no longer locked.
    expect(await rowOf(co, 'unknown-1')).toMatchObject({ state: 'UNKNOWN', status_code: null });
    expectError(await send(co, achBody(40_001), 'unknown-1'), 409, 'IDEMPOTENCY_KEY_REUSED');
    const retry = await send(co, body, 'unknown-1');
    expect([retry.status, replayed(retry)]).toEqual([201, null]);
    expect(await rowOf(co, 'unknown-1')).toMatchObject({ state: 'DONE', status_code: 201 });
    expect(await transfersOf(co)).toBe(1);
  });
});

describe('Idempotency-Key: scope, validation and what is stored', () => {
  it('is per company: two companies may use the same key for their own requests', async () => {
    const a = await company(0);
    const b = await company(0);
    const body = { externalId: 'shared-cust', name: 'Cliente' };
    const ra = await createKey(a, body, 'shared-key');
    const rb = await createKey(b, body, 'shared-key');
    expect([ra.status, replayed(ra), rb.status, replayed(rb)]).toEqual([201, null, 201, null]);
    expect(rb.body.id).not.toBe(ra.body.id);
    const ra2 = await createKey(a, body, 'shared-key');
    expect([ra2.status, replayed(ra2), ra2.body.id]).toEqual([201, 'true', ra.body.id]);
  });

  it('a malformed header → 400 INVALID_REQUEST on the Idempotency-Key field, before anything runs', async () => {
    const co = await company();
    for (const bad of ['', 'con espacio', 'x'.repeat(256)]) {
      const r = await send(co, achBody(10_000), bad);
      expectError(r, 400, 'INVALID_REQUEST');
      expect(r.body.details.fields).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(await transfersOf(co)).toBe(0);
  });

  it('a request refused by validation holds nothing: the key then serves the valid request', async () => {
    const co = await company();
    const bad = await send(co, { amount: 5 }, 'val-1');
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(await rowOf(co, 'val-1')).toBeUndefined();
    const ok = await send(co, achBody(10_000), 'val-1');
    expect([ok.status, replayed(ok)]).toEqual([201, null]);
  });

  it('a business 4xx is final: stored and replayed even after the cause is gone', async () => {
    const co = await company(50_000);
    const body = achBody(100_000);
    const refused = await send(co, body, 'poor-1');
    expectError(refused, 422, 'INSUFFICIENT_BALANCE');
    expect(replayed(refused)).toBeNull();
    const recorded = await transfersOf(co); // the service may keep a REJECTED record of the refusal
    expect((await admin.credit(co.id, 'ACH', 1_000_000, 'top-up')).status).toBe(201);
    const again = await send(co, body, 'poor-1');
    expectError(again, 422, 'INSUFFICIENT_BALANCE');
    expect(replayed(again)).toBe('true');
    expect(again.text).toBe(refused.text);
    expect(await transfersOf(co)).toBe(recorded);
    // A new key is a new request.
    expect((await send(co, body, 'poor-2')).status).toBe(201);
  });

  it('a 5xx is not stored: the claim is dropped and a retry with the same key runs normally', async () => {
    const co = await company(0);
    const faults = (state: 'up' | 'down') =>
      fetch(`${stack.sandboxUrl}/sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ directory: state }),
      });
    expect((await faults('down')).status).toBe(200);
    try {
      const failed = await createKey(co, { externalId: 'cust-5xx', name: 'Cliente' }, 'fail-1');
      expectError(failed, 503, 'BREB_DIRECTORY_LOOKUP_FAILED');
      expect(await rowOf(co, 'fail-1')).toBeUndefined();
    } finally {
      await faults('up');
    }
    const retry = await createKey(co, { externalId: 'cust-5xx', name: 'Cliente' }, 'fail-1');
    expect([retry.status, replayed(retry)]).toEqual([201, null]);
    expect(await rowOf(co, 'fail-1')).toMatchObject({ state: 'DONE', status_code: 201 });
  });

  it('expires after IDEMPOTENCY_KEY_TTL_SECONDS: the key then serves a new request', async () => {
    const co = await company(0);
    const shortTtl = await stack.extraGateway({ IDEMPOTENCY_KEY_TTL_SECONDS: '1', RATE_LIMIT_COLLECT_KEY_WRITES: '100000' });
    const short = client(shortTtl.url);
    const create = (externalId: string) =>
      short.post('/breb/collect-keys', { token: co.key, body: { externalId, name: 'Cliente' }, headers: { 'Idempotency-Key': 'ttl-1' } });
    const first = await create('cust-ttl-a');
    expect(first.status).toBe(201);
    expect(await rowOf(co, 'ttl-1')).toEqual({ state: 'DONE', status_code: 201, ttl: 1 });
    // Until it expires another body is a reuse; afterwards the key is free (the expired row is taken over).
    const fresh = await eventually(
      async () => {
        const r = await create('cust-ttl-b');
        if (r.status === 409) {
          expect(r.body.error).toBe('IDEMPOTENCY_KEY_REUSED');
          return undefined;
        }
        return r;
      },
      15_000,
      200,
    );
    expect([fresh.status, replayed(fresh)]).toEqual([201, null]);
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(fresh.body.externalId).toBe('cust-ttl-b');
  });
});

describe('Idempotency-Key: kept 30 days', () => {
  const MONTH = 30 * 86_400;
  /** Moves a key's timestamps back, as if it had been stored that long ago (expiry and locks are decided by Postgres's clock). */
  const age = (co: Co, key: string, interval: string) =>
    sql(
      stack.db.url,
      `update gateway.idempotency_keys
          set created_at = created_at - $3::interval, locked_until = locked_until - $3::interval, expires_at = expires_at - $3::interval
        where company_id = $1 and key = $2`,
      [co.id, key, interval],
    );
  /** One run of the gateway's background purge. */
  async function purge(): Promise<number> {
    const db = await Database.open({ url: stack.db.url, schema: 'gateway', migrations: gatewayMigrations, logger: createLogger('purge-test', 'silent') });
    try {
      return await new IdempotencyKeyStore(db, new SecretBox('k'.repeat(32))).purgeExpired();
    } finally {
      await db.close();
    }
  }

  it('an answer stored 29 days ago still replays; past 30 days it is purged and the key serves a new request', async () => {
    const co = await company(0);
    const create = (externalId: string, key: string) => createKey(co, { externalId, name: 'Cliente' }, key);
    const first = await create('cust-month-a', 'month-1');
    expect(first.status).toBe(201);
    // The default the gateway runs with: 30 days.
    expect(await rowOf(co, 'month-1')).toEqual({ state: 'DONE', status_code: 201, ttl: MONTH });
    await age(co, 'month-1', '29 days');
    const replay = await create('cust-month-a', 'month-1');
    expect([replay.status, replayed(replay), replay.text]).toEqual([201, 'true', first.text]);
    expectError(await create('cust-month-b', 'month-1'), 409, 'IDEMPOTENCY_KEY_REUSED');
    // The purge leaves it: it still counts.
    await purge();
    expect(await rowOf(co, 'month-1')).toMatchObject({ state: 'DONE' });

    await age(co, 'month-1', '1 day 1 second');
    expect(await purge()).toBeGreaterThanOrEqual(1);
    expect(await rowOf(co, 'month-1')).toBeUndefined();
    const fresh = await create('cust-month-b', 'month-1');
    expect([fresh.status, replayed(fresh)]).toEqual([201, null]);
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(await rowOf(co, 'month-1')).toEqual({ state: 'DONE', status_code: 201, ttl: MONTH });
  });

  it('an expired answer not yet purged is no answer: the key serves a new request at once', async () => {
    const co = await company(0);
    const first = await createKey(co, { externalId: 'cust-month-c', name: 'Cliente' }, 'month-2');
    expect(first.status).toBe(201);
    await age(co, 'month-2', '30 days 1 second');
    const fresh = await createKey(co, { externalId: 'cust-month-d', name: 'Cliente' }, 'month-2');
    expect([fresh.status, replayed(fresh), fresh.body.externalId]).toEqual([201, null, 'cust-month-d']);
    expect(await rowOf(co, 'month-2')).toEqual({ state: 'DONE', status_code: 201, ttl: MONTH });
  });

  it('a send past 30 days: the gateway forgot the key, the transfer service did not: the same body answers the same transfer, never a second one', async () => {
    const co = await company();
    const body = achBody(10_000);
    const first = await send(co, body, 'month-send');
    expect(first.status).toBe(201);
    await age(co, 'month-send', '29 days');
    const replay = await send(co, body, 'month-send');
    expect([replay.status, replayed(replay), replay.text]).toEqual([201, 'true', first.text]);
    await age(co, 'month-send', '1 day 1 second');
    expect(await purge()).toBeGreaterThanOrEqual(1);
    expect(await rowOf(co, 'month-send')).toBeUndefined();
    const again = await send(co, body, 'month-send');
    expect([again.status, again.body.id, replayed(again)]).toEqual([201, first.body.id, 'true']);
    expectError(await send(co, achBody(10_001), 'month-send'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect(await transfersOf(co)).toBe(1);
  });
});

describe('Idempotency-Key beside the §7.4 reference', () => {
  it('reference keeps its own replay and conflict rules with or without the header', async () => {
    const co = await company();
    const body = achBody(10_000, { reference: 'ref-1' });
    const first = await send(co, body);
    expect(first.status).toBe(201);
    // Same reference and body, no header: the reference replays the transfer (not an Idempotency-Key replay).
    const byRef = await send(co, body);
    expect([byRef.status, byRef.body.id, replayed(byRef)]).toEqual([201, first.body.id, null]);
    // With a fresh Idempotency-Key the reference still decides: the same transfer, stored under that key.
    const keyed = await send(co, body, 'ref-key-1');
    expect([keyed.status, keyed.body.id, replayed(keyed)]).toEqual([201, first.body.id, null]);
    const keyedAgain = await send(co, body, 'ref-key-1');
    expect([keyedAgain.status, keyedAgain.body.id, replayed(keyedAgain)]).toEqual([201, first.body.id, 'true']);
    // A different body under the same reference is REFERENCE_CONFLICT, header or not.
    expectError(await send(co, { ...body, amount: 10_001 }), 409, 'REFERENCE_CONFLICT');
    expectError(await send(co, { ...body, amount: 10_001 }, 'ref-key-2'), 409, 'REFERENCE_CONFLICT');
    expect(await transfersOf(co)).toBe(1);
  });
});

describe('purge', () => {
  it('deletes expired answers, dead claims and expired unknown outcomes, and keeps live ones', async () => {
    const co = await company(0);
    const insert = (key: string, state: string, lockedUntil: string, expiresAt: string) =>
      sql(
        stack.db.url,
        `insert into gateway.idempotency_keys (company_id, key, method, path, request_hash, state, claim_id, status_code, locked_until, expires_at)
       values ($1, $2, 'POST', '/x', 'h', $3, $4, case when $3 = 'DONE' then 201 end, now() + $5::interval, now() + $6::interval)`,
        [co.id, key, state, randomUUID(), lockedUntil, expiresAt],
      );
    await insert('done-expired', 'DONE', '-1 day', '-1 second');
    await insert('done-live', 'DONE', '-1 day', '1 day');
    await insert('flight-dead', 'IN_FLIGHT', '-1 second', '-1 second');
    await insert('flight-running', 'IN_FLIGHT', '1 minute', '-1 second');
    await insert('unknown-expired', 'UNKNOWN', '-1 day', '-1 second');
    await insert('unknown-live', 'UNKNOWN', '-1 day', '1 day');
    const db = await Database.open({ url: stack.db.url, schema: 'gateway', migrations: gatewayMigrations, logger: createLogger('purge-test', 'silent') });
    try {
      const repo = new IdempotencyKeyStore(db, new SecretBox('k'.repeat(32)));
      expect(await repo.purgeExpiredBatch(1)).toMatchObject({ deleted: 1 });
      expect(await repo.purgeExpired()).toBeGreaterThanOrEqual(1);
    } finally {
      await db.close();
    }
    const left = await sql(stack.db.url, 'select key from gateway.idempotency_keys where company_id = $1 order by key', [co.id]);
    expect(left.map((r) => r.key)).toEqual(['done-live', 'flight-running', 'unknown-live']);
  });
});
