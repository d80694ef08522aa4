import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { PDFParse } from 'pdf-parse';
import { eventually } from '@wallet/platform/testing';
import { startGateway } from '@wallet/gateway/testing';
import { startStack } from '../support/stack.js';
import { DbSnapshotter, clientErrorProblem, diff, fcParams, operations, send, type Operation, type RawAnswer } from '../support/hostile.js';
import { rawRequest } from '../support/raw-http.js';
import { checkRawDocumented, fetchDocumented } from '../support/openapi-check.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Company = Awaited<ReturnType<Stack['provision']>>;

/** B's webhook deliveries to a refusing loopback port are retried in the background: count their rows only. */
const BACKGROUND = { countOnly: ['webhook.deliveries', 'gateway.mail_outbox'] };

const gatewaySrc = (rel: string) => readFileSync(fileURLToPath(new URL(`../../gateway/src/${rel}`, import.meta.url)), 'utf8');

async function pdfText(buf: ArrayBuffer): Promise<string> {
  const parser = new PDFParse({ data: Buffer.from(buf) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

/**
 * Security: other companies' ids (IDOR), scope escalation, revoked and malformed keys, key
 * comparison, X-Forwarded-For from an untrusted peer, header and HTML injection into e-mails and
 * PDFs, oversized bodies, and the areas closed to API keys (slow clients: security-slow-clients.test.ts).
 */
describe('security', () => {
  let stack: Stack;
  let db: DbSnapshotter;
  let ops: Operation[];
  let a: Company;
  let b: Company;
  const bIds: Record<string, string> = {};
  const aIds: Record<string, string> = {};

  const payer = { payerDocumentTypeId: 1, payerDocumentNumber: '1020304050', payerFirstName: 'Ana', payerLastName: 'Ruiz', payerEmail: 'ana@example.com' };
  const req = (method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = {}) =>
    send(stack.gateway.url, method, path, { token, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const shape = (r: RawAnswer) => ({ status: r.status, body: r.body });
  /** Raw bytes to the gateway; the answer is checked against GET /openapi.json like any other. */
  const raw = async (head: string, opts?: Parameters<typeof rawRequest>[2]) => {
    const r = await rawRequest(stack.gateway.port, head, opts);
    await checkRawDocumented(stack.gateway.url, head, r);
    return r;
  };
  const mails = async (to: string) => ((await (await fetch(`${stack.sandbox!.url}/sandbox/emails?to=${encodeURIComponent(to)}`)).json()) as any).items as any[];

  beforeAll(async () => {
    stack = await startStack({
      transfers: true,
      deposits: true,
      collectKeys: true,
      receipts: true,
      webhooks: true,
      gatewayEnv: {
        RATE_LIMIT_READS: '100000',
        RATE_LIMIT_QUOTES: '100000',
        RATE_LIMIT_RESOLVE_KEY: '100000',
        RATE_LIMIT_FINANCIAL: '100000',
        RATE_LIMIT_COLLECT_KEY_WRITES: '100000',
        RATE_LIMIT_ADMIN: '100000',
        RATE_LIMIT_ADMIN_LOGIN: '100000',
      },
    });
    db = new DbSnapshotter(stack.databaseUrl);
    a = await stack.provision('Empresa A S.A.S.');
    b = await stack.provision('Empresa <b>B</b>\r\nBcc: victima@evil.example');
    for (const c of [a, b]) {
      await stack.admin('PATCH', `/admin/companies/${c.id}`, { rateLimitMultiplier: 1000 });
      expect((await stack.admin('POST', `/admin/companies/${c.id}/wallets/ACH/credit`, { amountCents: 50_000_000, reference: 'seed' })).status).toBe(201);
      await stack.admin('PUT', '/admin/fees/ACH_OUTFLOW', { fixedFeeCents: 300, variableBps: 0, companyId: c.id });
    }
    for (const [c, ids] of [
      [a, aIds],
      [b, bIds],
    ] as const) {
      const dep = await req('POST', '/deposits/pse', c.writeKey, { amountCents: 40_000, ...payer });
      expect(dep.status).toBe(201);
      const key = await req('POST', '/breb/collect-keys', c.writeKey, { externalId: `cliente-${c === a ? 'a' : 'b'}`, name: 'Tienda' });
      expect(key.status).toBe(201);
      const qr = await req('POST', `/breb/collect-keys/${key.body.id}/qr`, c.writeKey);
      expect(qr.status).toBe(201);
      const tx = await req('GET', '/wallets/transactions', c.readKey);
      const keys = await stack.admin('GET', `/admin/companies/${c.id}/api-keys`);
      Object.assign(ids, {
        deposit: dep.body.id,
        collectKey: key.body.id,
        externalId: `cliente-${c === a ? 'a' : 'b'}`,
        qr: qr.body.qr.id,
        tx: tx.body.items[0].id,
        readKeyId: keys.body.items.find((k: any) => k.scope === 'READ').id,
      });
    }
    const doc = await send(stack.gateway.url, 'GET', '/openapi.json');
    ops = operations(doc.body);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await stack?.stop();
  });

  /** A's ids in every path parameter (the caller's own, well-formed). */
  function pathFor(op: Operation, ids: Record<string, string> = aIds, companyId = a.id): string {
    return op.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
      const p = op.pathParams.find((x) => x.name === name);
      if (p?.schema.enum) return String(p.schema.enum[0]);
      if (name === 'keyId') return ids.readKeyId!;
      if (name === 'qrId') return ids.qr!;
      if (/deposits/.test(op.path)) return ids.deposit!;
      if (/collect-keys/.test(op.path)) return ids.collectKey!;
      if (/transactions/.test(op.path)) return ids.tx!;
      if (/companies/.test(op.path)) return companyId;
      return '00000000-0000-4000-8000-000000000000';
    });
  }
  const scopeOf = (op: Operation) => /Scope: \*\*(READ|WRITE)\*\*/.exec(op.description)?.[1];

  describe("other companies' ids (IDOR): the same 404 as an id that does not exist", () => {
    it('transactions, receipts, deposits, collect keys, QR codes', async () => {
      // B's transfer and paid deposit have receipts (B can read them); A cannot tell them from nothing.
      const sent = await req('POST', '/transfers/send', b.writeKey, {
        amount: 150_000,
        description: '<script>alert(1)</script> & "comillas" ñ €',
        destination: {
          bankAccount: {
            bankId: 1,
            accountTypeId: 20,
            accountNumber: '12345678901',
            documentTypeId: 1,
            documentNumber: '1020304050',
            holderFirstName: 'Ana <b>María</b>',
            holderLastName: 'Pérez',
          },
        },
      });
      expect(sent.status).toBe(201);
      bIds.transfer = sent.body.id;
      await fetch(`${stack.sandbox!.url}/sandbox/pse/${bIds.deposit}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
      });
      await eventually(
        async () => (await req('GET', `/wallets/transactions/${bIds.transfer}/receipt.pdf`, b.readKey)).status === 200 || undefined,
        20_000,
        200,
      );
      await eventually(async () => (await req('GET', `/wallets/deposits/${bIds.deposit}/receipt.pdf`, b.readKey)).status === 200 || undefined, 20_000, 200);

      // B's webhook endpoint and one delivery (a ping; the loopback discard port refuses it, which is fine).
      const we = await req('POST', '/webhooks/endpoints', b.writeKey, { url: 'http://127.0.0.1:9/hook', events: ['transfer.completed'] });
      expect(we.status).toBe(201);
      const ping = await req('POST', `/webhooks/endpoints/${we.body.id}/test`, b.writeKey);
      expect(ping.status).toBe(202);
      Object.assign(bIds, { webhookEndpoint: we.body.id, webhookDelivery: ping.body.id });
      const bEndpointBefore = (await req('GET', `/webhooks/endpoints/${we.body.id}`, b.readKey)).body;

      const uuid0 = '6f1c2c1e-0000-4000-8000-00000000dead';
      const pairs: Array<[string, string, string, unknown?]> = [
        ['GET', `/wallets/transactions/${bIds.transfer}`, `/wallets/transactions/${uuid0}`],
        ['GET', `/wallets/transactions/${bIds.tx}`, `/wallets/transactions/${uuid0}`],
        ['GET', `/wallets/transactions/${bIds.transfer}/receipt.pdf`, `/wallets/transactions/${uuid0}/receipt.pdf`],
        ['GET', `/wallets/deposits/${bIds.deposit}/receipt.pdf`, '/wallets/deposits/dep_doesnotexist0000/receipt.pdf'],
        ['POST', `/deposits/${bIds.deposit}/share-email`, '/deposits/dep_doesnotexist0000/share-email', { recipientEmail: 'idor@example.com' }],
        ['GET', `/breb/collect-keys/${bIds.collectKey}`, '/breb/collect-keys/bkey_doesnotexist00'],
        ['GET', `/breb/collect-keys/ext:${bIds.externalId}`, '/breb/collect-keys/ext:nadie-aqui'],
        ['POST', `/breb/collect-keys/${bIds.collectKey}/qr`, '/breb/collect-keys/bkey_doesnotexist00/qr'],
        ['GET', `/breb/collect-keys/qr/${bIds.qr}.png`, '/breb/collect-keys/qr/qr_doesnotexist00.png'],
        ['DELETE', `/breb/collect-keys/${bIds.collectKey}`, '/breb/collect-keys/bkey_doesnotexist00'],
        ['GET', `/webhooks/endpoints/${bIds.webhookEndpoint}`, '/webhooks/endpoints/we_doesnotexist00'],
        [
          'PATCH',
          `/webhooks/endpoints/${bIds.webhookEndpoint}`,
          '/webhooks/endpoints/we_doesnotexist00',
          { enabled: false, url: 'http://127.0.0.2:9/attacker' },
        ],
        ['POST', `/webhooks/endpoints/${bIds.webhookEndpoint}/rotate-secret`, '/webhooks/endpoints/we_doesnotexist00/rotate-secret', {}],
        ['POST', `/webhooks/endpoints/${bIds.webhookEndpoint}/test`, '/webhooks/endpoints/we_doesnotexist00/test'],
        ['DELETE', `/webhooks/endpoints/${bIds.webhookEndpoint}`, '/webhooks/endpoints/we_doesnotexist00'],
        ['GET', `/webhooks/deliveries/${bIds.webhookDelivery}`, '/webhooks/deliveries/whd_doesnotexist00'],
        ['POST', `/webhooks/deliveries/${bIds.webhookDelivery}/replay`, '/webhooks/deliveries/whd_doesnotexist00/replay'],
        ['GET', `/webhooks/deliveries?endpointId=${bIds.webhookEndpoint}`, '/webhooks/deliveries?endpointId=we_doesnotexist00'],
      ];
      const before = await db.settled(10_000, BACKGROUND);
      for (const [method, foreign, missing, body] of pairs) {
        const f = await req(method, foreign, a.writeKey, body);
        const m = await req(method, missing, a.writeKey, body);
        expect({ path: foreign, ...shape(f) }).toEqual({ path: foreign, ...shape(m) });
        if (!foreign.includes('?')) {
          expect(f.status).toBe(404);
          expect(clientErrorProblem(f)).toBeUndefined();
        }
      }
      // The webhook service retries B's failing deliveries in the background: its tables are checked through the API instead.
      expect(diff(before, await db.snapshot()).filter((t) => !t.startsWith('webhook.'))).toEqual([]);
      expect((await req('GET', `/webhooks/endpoints/${bIds.webhookEndpoint}`, b.readKey)).body).toEqual(bEndpointBefore);
      expect(await mails('idor@example.com')).toEqual([]);
      // B still has everything A tried to touch.
      expect((await req('GET', `/breb/collect-keys/${bIds.collectKey}`, b.readKey)).body.state).not.toMatch(/DELETED|INACTIVE|CLOSED/);
      // Listings and filters never show B's rows to A.
      const listed = JSON.stringify([
        (await req('GET', '/wallets/transactions?limit=100', a.readKey)).body,
        (await req('GET', '/deposits?limit=100', a.readKey)).body,
        (await req('GET', `/deposits?externalId=${bIds.externalId}`, a.readKey)).body,
        (await req('GET', '/breb/collect-keys?limit=100', a.readKey)).body,
        (await req('GET', `/breb/collect-keys?externalId=${bIds.externalId}`, a.readKey)).body,
      ]);
      for (const id of Object.values(bIds)) expect(listed).not.toContain(id);
    });

    it("an API key id of B under A's company (admin) is not found, and B's key keeps working", async () => {
      const r = await stack.admin('DELETE', `/admin/companies/${a.id}/api-keys/${bIds.readKeyId}`);
      expect(r.status).toBe(404);
      expect(clientErrorProblem({ ...r, text: r.text, body: r.body, headers: r.headers })).toBeUndefined();
      expect((await req('GET', '/wallets/balance', b.readKey)).status).toBe(200);
      expect((await stack.admin('GET', `/admin/companies/${a.id}/api-keys`)).body.items.map((k: any) => k.id)).not.toContain(bIds.readKeyId);
    });
  });

  it('scope escalation: a READ key on every WRITE route → 403 INSUFFICIENT_SCOPE with required/granted, nothing written', async () => {
    const writes = ops.filter((op) => op.auth === 'apiKey' && scopeOf(op) === 'WRITE');
    expect(writes.length).toBeGreaterThanOrEqual(8);
    const before = await db.settled(10_000, BACKGROUND);
    for (const op of writes) {
      const r = await req(op.method, pathFor(op), a.readKey, op.body ? {} : undefined);
      expect({ op: `${op.method} ${op.path}`, status: r.status, body: r.body }).toEqual({
        op: `${op.method} ${op.path}`,
        status: 403,
        body: { error: 'INSUFFICIENT_SCOPE', message: expect.any(String), required: 'WRITE', granted: 'READ' },
      });
    }
    expect(diff(before, await db.snapshot(), BACKGROUND)).toEqual([]);
    // READ routes stay open to it.
    for (const op of ops.filter((o) => o.auth === 'apiKey' && scopeOf(o) === 'READ' && o.pathParams.length === 0)) {
      expect((await req(op.method, op.path, a.readKey)).status).not.toBe(403);
    }
  });

  it('a revoked key is refused at once on every client route, before anything else', async () => {
    const issued = await stack.admin('POST', `/admin/companies/${a.id}/api-keys`, { scope: 'WRITE', label: 'a-revocar' });
    expect((await req('GET', '/wallets/balance', issued.body.key)).status).toBe(200);
    expect((await stack.admin('DELETE', `/admin/companies/${a.id}/api-keys/${issued.body.id}`)).status).toBe(200);
    const clientOps = ops.filter((op) => op.auth === 'apiKey');
    const before = await db.settled(10_000, BACKGROUND);
    for (const op of clientOps) {
      const r = await req(op.method, pathFor(op), issued.body.key, op.body ? {} : undefined);
      expect({ op: `${op.method} ${op.path}`, status: r.status, error: r.body?.error }).toEqual({
        op: `${op.method} ${op.path}`,
        status: 401,
        error: 'INVALID_API_KEY',
      });
    }
    expect(diff(before, await db.snapshot(), BACKGROUND)).toEqual([]);
  });

  it('malformed keys and Authorization forms → 401 (never 2xx, never 5xx)', async () => {
    const good = a.readKey;
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'AUTH_REQUIRED'],
      [{ authorization: '' }, 'INVALID_API_KEY'],
      [{ authorization: 'Bearer' }, 'INVALID_API_KEY'],
      [{ authorization: 'Bearer ' }, 'INVALID_API_KEY'],
      [{ authorization: good }, 'INVALID_API_KEY'],
      [{ authorization: `Basic ${Buffer.from(`${good}:`).toString('base64')}` }, 'INVALID_API_KEY'],
      [{ authorization: `Token ${good}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good} ${good}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good},Bearer ${good}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer "${good}"` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good.slice(0, -1)}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good}A` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good.toUpperCase()}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good.replace('wk_test_', 'wk_live_')}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good.replace('wk_test_', 'WK_TEST_')}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${good.replace('wk_test_', '')}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer wk_test_${'A'.repeat(31)}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer wk_test_${'A'.repeat(129)}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer wk_test_${'A'.repeat(8000)}` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer wk_test_${'A'.repeat(39)}-` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer wk_test_${'A'.repeat(39)}ñ` }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer wk_test_${'A'.repeat(39)}%00` }, 'INVALID_API_KEY'],
      [{ authorization: "Bearer wk_test_' OR '1'='1" }, 'INVALID_API_KEY'],
      [{ authorization: `Bearer ${stack.gateway.adminToken}` }, 'INVALID_API_KEY'],
    ];
    for (const [headers, code] of cases) {
      const r = await req('GET', '/wallets/balance', undefined, undefined, headers);
      expect({ auth: headers.authorization?.slice(0, 60), status: r.status, error: r.body?.error }).toEqual({
        auth: headers.authorization?.slice(0, 60),
        status: 401,
        error: code,
      });
      expect(clientErrorProblem(r)).toBeUndefined();
    }
    // Bearer is case-insensitive and tolerates extra spaces (RFC 7235): the real key still works.
    expect((await req('GET', '/wallets/balance', undefined, undefined, { authorization: `bearer   ${good}` })).status).toBe(200);
    // Random credentials (printable Latin-1, the header alphabet): never accepted, never a server error.
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary-ascii', maxLength: 200 }),
          fc.string({ unit: fc.constantFrom(...'wk_test_AZaz09+/=.-ñ\u00ff'.split('')), maxLength: 60 }).map((s) => `wk_test_${s}`),
        ),
        async (token) => {
          const clean = token.replace(/[\u0000-\u001f\u007f]/g, '');
          const r = await req('GET', '/wallets/balance', undefined, undefined, { authorization: `Bearer ${clean}` });
          expect(r.status).toBe(401);
          expect(clientErrorProblem(r)).toBeUndefined();
        },
      ),
      fcParams(40),
    );
    // Raw bytes a fetch client cannot send: CR/LF splitting, NUL, obs-fold.
    for (const line of [
      `Authorization: Bearer ${good}\r\n Bearer`,
      `Authorization: Bearer wk_test_\u0000${'A'.repeat(40)}`,
      'Authorization: Bearer \u00e9\u00e9\u00e9',
    ]) {
      const r = await raw(`GET /wallets/balance HTTP/1.1\r\nHost: x\r\n${line}\r\nConnection: close\r\n\r\n`);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      // Refused by the HTTP parser or by the app: the API's error shape and a request id either way.
      expect(JSON.parse(r.body)).toEqual({ error: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) });
      expect(r.raw).toMatch(/\r\nx-request-id: /i);
    }
  });

  it('key comparison is by HMAC lookup and crypto.timingSafeEqual, never a string comparison of secrets', () => {
    const authn = gatewaySrc('auth/api-key-authenticator.ts');
    const format = gatewaySrc('auth/api-key-format.ts');
    const admin = gatewaySrc('auth/admin-token.ts');
    const repo = gatewaySrc('persistence/api-key.store.ts');
    // Keys are looked up by their HMAC (unique index), and the stored hash is compared in constant time.
    expect(format).toMatch(/createHmac\('sha256', pepper\)/);
    expect(repo).toMatch(/where k\.key_hash = \?/);
    expect(authn).toMatch(/import \{[^}]*timingSafeEqual[^}]*\} from 'node:crypto'/);
    expect(authn).toMatch(/timingSafeEqual\(a, b\)/);
    expect(authn).not.toMatch(/(hash|keyHash|token)\s*[!=]==|[!=]==\s*(hash|keyHash|token)\b/);
    // The operator token: HMAC of both sides (equal lengths), then timingSafeEqual.
    expect(admin).toMatch(/timingSafeEqual\(this\.digest\(candidate\), this\.expected\)/);
    expect(admin).not.toMatch(/candidate\s*[!=]==|[!=]==\s*candidate/);
  });

  it('X-Forwarded-For (and friends) from an untrusted peer do not change the rate-limit bucket', async () => {
    const g = await startGateway({
      databaseUrl: stack.databaseUrl,
      ledgerAddress: stack.ledger.address,
      namespace: `${stack.namespace}-xff`,
      env: { LOG_LEVEL: 'silent', TRUSTED_PROXIES: '10.0.0.0/8', RATE_LIMIT_READS: '3', RATE_LIMIT_PREFIX: `${stack.namespace}-xff` },
    });
    try {
      const fresh = await stack.provision('Sin Multiplicador S.A.S.');
      const spoofs: Array<Record<string, string>> = [
        { 'x-forwarded-for': '198.51.100.1' },
        { 'x-forwarded-for': '198.51.100.2, 10.0.0.1' },
        { 'x-real-ip': '198.51.100.3', forwarded: 'for=198.51.100.3' },
        { 'x-forwarded-for': '::ffff:198.51.100.4', 'x-client-ip': '198.51.100.4' },
        { 'x-forwarded-for': 'garbage, 198.51.100.5' },
      ];
      // A key of its own for every request: each key also has its own budget (docs/security.md "Operator lockouts and trusted proxies"), so only the
      // per-IP counter (the socket peer) can refuse these.
      const keyOf = async () => (await stack.admin('POST', `/admin/companies/${fresh.id}/api-keys`, { scope: 'READ', label: 'xff' })).body.key as string;
      const statuses: number[] = [];
      for (const h of spoofs) statuses.push((await send(g.url, 'GET', '/wallets/balance', { token: await keyOf(), headers: h })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const limited = await send(g.url, 'GET', '/wallets/balance', { token: await keyOf(), headers: { 'x-forwarded-for': '203.0.113.200' } });
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), retryAfter: expect.any(Number) });
    } finally {
      await g.stop();
    }
  });

  describe('header and HTML injection', () => {
    it('X-Request-Id: anything outside [A-Za-z0-9._-]{1,128} is replaced, never echoed', async () => {
      for (const bad of ['abc<script>', 'a b', 'x'.repeat(129), '../etc/passwd', 'id;drop', 'ñandú', '"quoted"', '']) {
        const r = await req('GET', '/wallets/balance', a.readKey, undefined, { 'x-request-id': bad });
        const echoed = r.headers.get('x-request-id');
        expect(echoed).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      }
      expect((await req('GET', '/wallets/balance', a.readKey, undefined, { 'x-request-id': 'req-1.ok_X' })).headers.get('x-request-id')).toBe('req-1.ok_X');
      // CR / LF inside the header never reach the answer as a new header.
      for (const value of ['a\rSet-Cookie: evil=1', 'a\nSet-Cookie: evil=1', 'a\r\n Set-Cookie: evil=1']) {
        const r = await raw(
          `GET /wallets/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.readKey}\r\nX-Request-Id: ${value}\r\nConnection: close\r\n\r\n`,
        );
        expect(r.raw).not.toMatch(/set-cookie:\s*evil/i);
        expect(r.status).toBeLessThan(500);
      }
    });

    it('share-email: CR/LF cannot add recipients or headers; markup in every field is escaped in the HTML', async () => {
      // B's company name carries markup and a CRLF "Bcc:" line (set at provisioning).
      const to = `destino+${Date.now()}@example.com`;
      const s = await req('POST', `/deposits/${bIds.deposit}/share-email`, b.writeKey, {
        recipientEmail: to,
        recipientName: 'Carlos\r\nBcc: victima@evil.example"><svg onload=alert(1)>',
        customMessage: '<script>alert(1)</script><img src=x onerror=alert(1)>\r\nBcc: victima@evil.example\r\n\r\n<a href="javascript:alert(1)">pague</a>',
      });
      // The deposit was paid above; sharing a paid link may be refused — then share a fresh one.
      if (s.status !== 200) {
        const dep = await req('POST', '/deposits/pse', b.writeKey, { amountCents: 41_000, ...payer });
        const s2 = await req('POST', `/deposits/${dep.body.id}/share-email`, b.writeKey, {
          recipientEmail: to,
          recipientName: 'Carlos\r\nBcc: victima@evil.example"><svg onload=alert(1)>',
          customMessage: '<script>alert(1)</script><img src=x onerror=alert(1)>\r\nBcc: victima@evil.example\r\n\r\n<a href="javascript:alert(1)">pague</a>',
        });
        expect(s2.status).toBe(200);
      }
      const mail = await eventually(async () => (await mails(to))[0], 10_000, 100);
      expect(mail.to).toEqual([to]);
      expect(mail.subject).not.toMatch(/[\r\n]/);
      // The injected "Bcc:" stays text on the one subject line.
      expect(mail.subject).toMatch(/^Solicitud de pago de Empresa <b>B<\/b> Bcc: victima@evil\.example$/);
      expect(await mails('victima@evil.example')).toEqual([]);
      const tags = [...(mail.html as string).matchAll(/<\s*([a-z0-9]+)/gi)].map((m) => m[1]!.toLowerCase());
      expect(tags.filter((t) => ['script', 'img', 'svg', 'iframe'].includes(t))).toEqual([]);
      expect(mail.html).not.toMatch(/<[^>]*\son(error|load)\s*=/i);
      expect(mail.html).not.toMatch(/<a[^>]*href="javascript:/i);
      expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(mail.html).toContain('&lt;b&gt;B&lt;/b&gt;');
      // recipientEmail itself cannot smuggle a header.
      const crlfTo = await req('POST', `/deposits/${bIds.deposit}/share-email`, b.writeKey, { recipientEmail: `${to}\r\nBcc: victima@evil.example` });
      expect({ status: crlfTo.status, error: crlfTo.body.error }).toEqual({ status: 400, error: 'INVALID_REQUEST' });
      expect(await mails('victima@evil.example')).toEqual([]);
    });

    it('receipts: markup and unusual characters in the description and names are rendered as text, no crash', async () => {
      const res = await eventually(
        async () => {
          const r = await fetchDocumented(`${stack.gateway.url}/wallets/transactions/${bIds.transfer}/receipt.pdf`, {
            headers: { authorization: `Bearer ${b.readKey}` },
          });
          return r.status === 200 ? r : undefined;
        },
        15_000,
        200,
      );
      expect(res.headers.get('content-type')).toBe('application/pdf');
      const text = await pdfText(await res.arrayBuffer());
      expect(text).toContain('<script>alert(1)</script>');
      expect(text).toContain('"comillas"');
      // Emoji, bidi overrides, combining marks and C0 controls: the transfer may be refused (4xx) but never a 5xx, and a
      // receipt of an accepted one is a PDF.
      for (const description of ['Pago 🏦💸 \u202Eoverride\u202C', 'e\u0301\u0301 \u0007\u001b[31m', 'مرحبا بالعالم', 'x\uD800y']) {
        const r = await req('POST', '/transfers/send', b.writeKey, {
          amount: 10_000,
          description,
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
        });
        expect(r.status).toBeLessThan(500);
        if (r.status !== 201) {
          expect(clientErrorProblem(r)).toBeUndefined();
          continue;
        }
        const pdf = await eventually(
          async () => {
            const x = await fetchDocumented(`${stack.gateway.url}/wallets/transactions/${r.body.id}/receipt.pdf`, {
              headers: { authorization: `Bearer ${b.readKey}` },
            });
            expect(x.status).toBeLessThan(500);
            return x.status === 200 ? x : undefined;
          },
          15_000,
          200,
        );
        expect(pdf.headers.get('content-type')).toBe('application/pdf');
        expect((await pdfText(await pdf.arrayBuffer())).length).toBeGreaterThan(50);
      }
    });
  });

  describe('oversized bodies', () => {
    it('> 1 MiB → 413 PAYLOAD_TOO_LARGE by Content-Length, by chunked streaming and far past the drain limit', async () => {
      const big = JSON.stringify({ externalId: 'x', name: 'y'.repeat(1024 * 1024) });
      const r1 = await send(stack.gateway.url, 'POST', '/breb/collect-keys', { token: a.writeKey, body: big });
      expect({ status: r1.status, error: r1.body?.error }).toEqual({ status: 413, error: 'PAYLOAD_TOO_LARGE' });
      // Chunked, no Content-Length: counted while streaming.
      const chunked = await raw(
        `POST /breb/collect-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.writeKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
        { chunks: 12, chunkBytes: 128 * 1024, tolerateReset: true },
      );
      expect(chunked.status).toBe(413);
      expect(JSON.parse(chunked.body).error).toBe('PAYLOAD_TOO_LARGE');
      // 20 MiB declared: refused from the header; the server reads (and discards) at most 8 MiB, then answers
      // without waiting for the rest (we stop one byte past 8 MiB, so nothing is left unread to turn the close into a reset).
      const declared = await raw(
        `POST /breb/collect-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.writeKey}\r\nContent-Type: application/json\r\nContent-Length: ${20 * 1024 * 1024}\r\nConnection: close\r\n\r\n`,
        { chunks: 32, chunkBytes: 256 * 1024, tail: 'a', tolerateReset: true },
      );
      expect(declared.status).toBe(413);
      // A header block above Node's limit is refused by the HTTP parser (431), and the server lives on.
      const hugeHeader = await raw(`GET /wallets/balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\nConnection: close\r\n\r\n`);
      expect(hugeHeader.status).toBe(431);
      expect(JSON.parse(hugeHeader.body)).toEqual({ error: 'HEADERS_TOO_LARGE', message: 'Los encabezados de la solicitud son demasiado grandes.' });
      expect((await req('GET', '/wallets/balance', a.readKey)).status).toBe(200);
    });
  });

  describe('areas closed to API keys, and the operator token', () => {
    it('every /admin operation: no token → 401, wrong token → 401, an API key (valid or not) → 403; nothing written', async () => {
      const adminOps = ops.filter((op) => op.auth === 'adminToken');
      expect(adminOps.length).toBeGreaterThanOrEqual(10);
      const before = await db.settled(10_000, BACKGROUND);
      for (const op of adminOps) {
        const path = pathFor(op);
        const body = op.body ? {} : undefined;
        const cases: Array<[Record<string, string>, number, string]> = [
          [{}, 401, 'AUTH_REQUIRED'],
          [{ authorization: 'Bearer wrong-admin-token' }, 401, 'INVALID_ADMIN_TOKEN'],
          [{ authorization: `Bearer ${stack.gateway.adminToken} ` }, 200, ''],
          [{ authorization: `Bearer ${stack.gateway.adminToken}x` }, 401, 'INVALID_ADMIN_TOKEN'],
          [{ authorization: `Basic ${Buffer.from(`admin:${stack.gateway.adminToken}`).toString('base64')}` }, 401, 'INVALID_ADMIN_TOKEN'],
          [{ authorization: stack.gateway.adminToken }, 401, 'INVALID_ADMIN_TOKEN'],
          [{ authorization: `Bearer ${a.writeKey}` }, 403, 'API_KEY_AUTH_NOT_ALLOWED'],
          [{ authorization: `Bearer ${a.readKey}` }, 403, 'API_KEY_AUTH_NOT_ALLOWED'],
          [{ authorization: `Bearer wk_live_${'Z'.repeat(40)}` }, 403, 'API_KEY_AUTH_NOT_ALLOWED'],
        ];
        for (const [headers, status, error] of cases) {
          if (status === 200) continue; // a trailing space is the real token (RFC 7235 allows it): not a refusal case
          const r = await req(op.method, path, undefined, body, headers);
          expect({ op: `${op.method} ${op.path}`, auth: headers.authorization?.slice(0, 20), status: r.status, error: r.body?.error }).toEqual({
            op: `${op.method} ${op.path}`,
            auth: headers.authorization?.slice(0, 20),
            status,
            error,
          });
        }
      }
      expect(diff(before, await db.snapshot(), BACKGROUND)).toEqual([]);
    });

    it('a dashboard session token is neither an API key nor the operator token; forged sessions → 401', async () => {
      const email = `seguridad.${Date.now()}@empresa.co`;
      const password = 'Clave-segura-seguridad-2026';
      const u = await stack.admin('POST', `/admin/companies/${a.id}/users`, { email, password, role: 'ADMIN' });
      expect(u.status).toBe(201);
      const login = await req('POST', '/auth/login', undefined, { email, password });
      expect(login.status).toBe(200);
      const session = login.body.token as string;
      expect((await req('GET', '/auth/me', session)).status).toBe(200);
      for (const op of ops.filter((o) => o.auth === 'apiKey')) {
        const r = await req(op.method, pathFor(op), session, op.body ? {} : undefined);
        expect({ op: `${op.method} ${op.path}`, status: r.status, error: r.body?.error }).toEqual({
          op: `${op.method} ${op.path}`,
          status: 401,
          error: 'INVALID_API_KEY',
        });
      }
      for (const op of ops.filter((o) => o.auth === 'adminToken')) {
        const r = await req(op.method, pathFor(op), session, op.body ? {} : undefined);
        expect({ op: `${op.method} ${op.path}`, status: r.status, error: r.body?.error }).toEqual({
          op: `${op.method} ${op.path}`,
          status: 401,
          error: 'INVALID_ADMIN_TOKEN',
        });
      }
      // Forged, truncated or extended session tokens, and the operator token: 401 on the session routes, with the error shape.
      await fc.assert(
        fc.asyncProperty(
          fc
            .oneof(
              fc.constantFrom(
                session.slice(0, -1),
                `${session}A`,
                session.toUpperCase() === session ? session.toLowerCase() : session.toUpperCase(),
                stack.gateway.adminToken,
                'null',
                'undefined',
              ),
              fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 300 }).map((s) => s.replace(/[\s\u0000-\u001f\u007f]/g, 'x')),
            )
            .filter((t) => t !== session && !t.startsWith('wk_')),
          async (token) => {
            const r = await req('GET', '/auth/me', token);
            expect(r.status).toBe(401);
            expect(clientErrorProblem(r)).toBeUndefined();
          },
        ),
        fcParams(30),
      );
      // Logged out: the token dies at once.
      expect((await req('POST', '/auth/logout', session)).status).toBe(204);
      expect((await req('GET', '/auth/me', session)).status).toBe(401);
      expect((await req('GET', '/dashboard/approvals', session)).status).toBe(401);
    });

    it('every /dashboard and /auth path (documented or not) refuses API keys with 403 API_KEY_AUTH_NOT_ALLOWED', async () => {
      const areaOps = ops.filter((op) => /^\/(dashboard|auth)(\/|$)/.test(op.path));
      const paths: Array<[string, string]> = [
        ...areaOps.map((op) => [op.method, pathFor(op)] as [string, string]),
        ['GET', '/dashboard'],
        ['GET', '/dashboard/'],
        ['GET', '/dashboard/approvals'],
        ['POST', '/dashboard/approvals/x/sign'],
        ['POST', '/auth/login'],
        ['POST', '/auth/logout'],
        ['GET', '/auth/me'],
        ['GET', '/auth/nope'],
        ['GET', '/admin'],
        ['GET', '/admin/'],
      ];
      for (const [method, path] of paths) {
        for (const key of [a.writeKey, a.readKey]) {
          const r = await req(method, path, key, method === 'GET' ? undefined : {});
          expect({ path, status: r.status, error: r.body?.error }).toEqual({ path, status: 403, error: 'API_KEY_AUTH_NOT_ALLOWED' });
        }
      }
      // Without a credential, the session-protected ones answer 401.
      for (const op of areaOps.filter((o) => o.auth !== 'public')) {
        const r = await req(op.method, pathFor(op), undefined, op.body ? {} : undefined);
        expect({ op: `${op.method} ${op.path}`, status: r.status }).toEqual({ op: `${op.method} ${op.path}`, status: 401 });
      }
      // The operator token is not a client credential on any client route.
      for (const op of ops.filter((o) => o.auth === 'apiKey')) {
        const r = await req(op.method, pathFor(op), stack.gateway.adminToken, op.body ? {} : undefined);
        expect({ op: `${op.method} ${op.path}`, status: r.status, error: r.body?.error }).toEqual({
          op: `${op.method} ${op.path}`,
          status: 401,
          error: 'INVALID_API_KEY',
        });
      }
    });
  });
});
