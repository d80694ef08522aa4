import { Webhook } from 'standardwebhooks';
import {
  WalletApiError,
  WalletClient,
  WalletConnectionError,
  WalletTimeoutError,
  operations,
  verifyWebhook,
  WebhookVerificationError,
  type RetryEvent,
} from '../src/index.js';
import { parseRetryAfter } from '../src/errors.js';
import { startFakeApi, type Reply, type Seen } from './fake-api.js';

type Fake = Awaited<ReturnType<typeof startFakeApi>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SEND = {
  amount: 250_000,
  destination: { brebKey: { type: 'PHONE' as const, value: '3001112233' } },
  targetName: 'Ana Pérez',
  targetDocument: '1020304050',
  reference: 'factura-1',
};
const TRANSFER = { id: '7f0c7a52-5d3e-4c59-9d43-1f1f3b6c8e11', status: 'PENDING' };
const ACCOUNT = {
  bankId: 1,
  accountTypeId: 20 as const,
  accountNumber: '12345678901',
  documentTypeId: 1 as const,
  documentNumber: '1020304050',
  holderFirstName: 'Ana',
  holderLastName: 'Pérez',
};
const err = (status: number, error: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Reply => ({
  status,
  json: { error, message: `mensaje de ${error}`, ...extra },
  headers,
});

/** A client on the fake, with instant waits that are recorded (no timing in assertions). */
function clientOn(fake: Fake, extra: Partial<ConstructorParameters<typeof WalletClient>[0]> = {}) {
  const retries: RetryEvent[] = [];
  const client = new WalletClient({
    baseUrl: `${fake.url}/`,
    apiKey: 'wk_test_abc',
    timeoutMs: 5_000,
    sleep: async () => {},
    onRetry: (e) => retries.push(e),
    ...extra,
  });
  return { client, retries };
}

describe('WalletClient against a real HTTP server', () => {
  let fake: Fake | undefined;
  afterEach(async () => {
    await fake?.stop();
    fake = undefined;
  });
  const serve = async (reply: (req: Seen, n: number) => Reply) => (fake = await startFakeApi(reply));

  it('sends the API key, joins the base URL, and returns the typed answer', async () => {
    const f = await serve(() => ({ status: 200, json: { wallets: [{ rail: 'BREB', availableCents: '100' }] } }));
    const { client } = clientOn(f, { headers: { 'User-Agent': 'erp/1.0' } });
    const balance = await client.wallets.balance();
    expect(balance.wallets[0]).toMatchObject({ rail: 'BREB', availableCents: '100' });
    expect(f.seen[0]).toMatchObject({ method: 'GET', path: '/wallets/balance' });
    expect(f.seen[0]!.headers.authorization).toBe('Bearer wk_test_abc');
    expect(f.seen[0]!.headers['user-agent']).toBe('erp/1.0');
    expect(f.seen[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('a send after a dropped connection is retried with the same Idempotency-Key and the same body', async () => {
    const f = await serve((_req, n) => (n === 1 ? 'drop' : { status: 201, json: TRANSFER }));
    const { client, retries } = clientOn(f);
    const t = await client.transfers.send(SEND);
    expect(t).toEqual(TRANSFER);
    expect(f.seen).toHaveLength(2);
    const [a, b] = f.seen as [Seen, Seen];
    expect(a.headers['idempotency-key']).toMatch(UUID);
    expect(b.headers['idempotency-key']).toBe(a.headers['idempotency-key']);
    expect(JSON.parse(b.body)).toEqual(SEND);
    expect(b.body).toBe(a.body);
    expect(retries).toEqual([
      { operationId: 'sendTransfer', retry: 1, delayMs: expect.any(Number), reason: 'network', idempotencyKey: a.headers['idempotency-key'] },
    ]);
  });

  it('each call gets its own key; a caller-chosen key is sent as is', async () => {
    const f = await serve(() => ({ status: 201, json: TRANSFER }));
    const { client } = clientOn(f);
    await client.transfers.send(SEND);
    await client.transfers.send(SEND);
    await client.transfers.send(SEND, { idempotencyKey: 'order-42' });
    const keys = f.seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe('order-42');
  });

  it('a 5xx is retried (same key) on a creating call, never on a call without a key', async () => {
    const f = await serve((req, n) => (req.path === '/deposits/pse' && n > 2 ? { status: 201, json: { id: 'd1' } } : err(503, 'SERVICE_UNAVAILABLE')));
    const { client } = clientOn(f, { maxRetries: 3 });
    const execute = client.batches.execute('0b7a3c1e-4f0e-4d7e-9a55-7d0b0c4f2a11');
    await expect(execute).rejects.toMatchObject({ name: 'WalletApiError', status: 503, error: 'SERVICE_UNAVAILABLE', requestId: 'req-1' });
    expect(f.seen).toHaveLength(1);
    const pse = await client.deposits.createPse({
      amountCents: 100_000,
      payerDocumentTypeId: 1,
      payerDocumentNumber: '1020304050',
      payerFirstName: 'Ana',
      payerLastName: 'Pérez',
      payerEmail: 'ana@example.com',
    } as never);
    expect(pse).toEqual({ id: 'd1' });
    expect(f.seen.map((s) => s.path)).toEqual(['/transfers/batches/0b7a3c1e-4f0e-4d7e-9a55-7d0b0c4f2a11/execute', '/deposits/pse', '/deposits/pse']);
    expect(f.seen[2]!.headers['idempotency-key']).toBe(f.seen[1]!.headers['idempotency-key']);
  });

  it('429 is retried on any call after Retry-After; a Retry-After longer than maxRetryDelayMs is thrown, not waited for', async () => {
    const f = await serve((req, n) =>
      n === 1 || req.path.endsWith('/cancel') ? err(429, 'RATE_LIMIT_EXCEEDED', { retryAfter: 3 }, { 'retry-after': '3' }) : { status: 200, json: { id: 'b' } },
    );
    const { client, retries } = clientOn(f, { maxRetryDelayMs: 5_000 });
    await client.batches.execute('b'); // no idempotency key, but a 429 ran nothing
    expect(retries).toEqual([{ operationId: 'executeBatch', retry: 1, delayMs: 3000, reason: 429, idempotencyKey: undefined }]);
    const short = clientOn(f, { maxRetryDelayMs: 1_000 });
    const e = await short.client.batches.cancel('b').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WalletApiError);
    expect(e).toMatchObject({ status: 429, error: 'RATE_LIMIT_EXCEEDED', retryAfterSeconds: 3 });
    expect(short.retries).toEqual([]);
  });

  it('409 IDEMPOTENCY_KEY_IN_USE waits and retries with the same key; IDEMPOTENCY_KEY_REUSED is the answer', async () => {
    const f = await serve((req, n) =>
      n === 1
        ? err(409, 'IDEMPOTENCY_KEY_IN_USE')
        : req.headers['idempotency-key'] === 'k2'
          ? err(409, 'IDEMPOTENCY_KEY_REUSED')
          : { status: 201, json: TRANSFER },
    );
    const { client, retries } = clientOn(f);
    expect(await client.transfers.send(SEND, { idempotencyKey: 'k1' })).toEqual(TRANSFER);
    expect(f.seen.map((s) => s.headers['idempotency-key'])).toEqual(['k1', 'k1']);
    expect(retries.map((r) => r.reason)).toEqual([409]);
    await expect(client.transfers.send(SEND, { idempotencyKey: 'k2' })).rejects.toMatchObject({ status: 409, error: 'IDEMPOTENCY_KEY_REUSED' });
    expect(f.seen).toHaveLength(3);
  });

  it('any other 4xx is thrown at once as WalletApiError with error, message, details and requestId', async () => {
    const details = { fields: [{ path: 'amount', message: 'Debe ser un entero' }] };
    const f = await serve(() => err(400, 'INVALID_REQUEST', { details }));
    const { client, retries } = clientOn(f);
    const e = (await client.transfers.quote({ amount: 100, keyValue: '3001234567' }).catch((x: unknown) => x)) as WalletApiError;
    expect(e).toBeInstanceOf(WalletApiError);
    expect(e).toBeInstanceOf(Error);
    expect({ status: e.status, error: e.error, message: e.message, details: e.details, requestId: e.requestId }).toEqual({
      status: 400,
      error: 'INVALID_REQUEST',
      message: 'mensaje de INVALID_REQUEST',
      details,
      requestId: 'req-1',
    });
    expect(f.seen).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('an answer not in the API error shape still becomes a WalletApiError with the status', async () => {
    const f = await serve(() => ({ status: 502, raw: '<html>Bad gateway</html>', type: 'text/html' }));
    const { client } = clientOn(f, { maxRetries: 1 });
    await expect(client.wallets.balance()).rejects.toMatchObject({
      status: 502,
      error: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('Bad gateway'),
    });
    expect(f.seen).toHaveLength(2); // a read is retried
  });

  it('retries stop after maxRetries and throw the last error', async () => {
    const f = await serve(() => err(500, 'INTERNAL_ERROR'));
    const { client, retries } = clientOn(f, { maxRetries: 2 });
    await expect(client.movements.get('7f0c7a52-5d3e-4c59-9d43-1f1f3b6c8e11')).rejects.toMatchObject({
      status: 500,
      error: 'INTERNAL_ERROR',
      requestId: 'req-3',
    });
    expect(f.seen).toHaveLength(3);
    expect(retries.map((r) => r.retry)).toEqual([1, 2]);
    // Backoff grows: each wait is within [½, 1] × base·2ⁿ.
    const { client: c2, retries: r2 } = clientOn(f, { maxRetries: 3, retryBaseDelayMs: 100 });
    await expect(c2.wallets.balance()).rejects.toBeInstanceOf(WalletApiError);
    r2.forEach((r, n) => {
      expect(r.delayMs).toBeGreaterThanOrEqual(50 * 2 ** n);
      expect(r.delayMs).toBeLessThanOrEqual(100 * 2 ** n);
    });
  });

  it('a timeout is retried on a read and on a keyed create, thrown as WalletTimeoutError on a call without a key', async () => {
    const f = await serve((req, n) => (n === 1 || req.path.endsWith('/cancel') ? 'hang' : { status: 200, json: { wallets: [] } }));
    const { client, retries } = clientOn(f, { timeoutMs: 300 });
    expect(await client.wallets.balance()).toEqual({ wallets: [] });
    expect(retries.map((r) => r.reason)).toEqual(['timeout']);
    const e = await client.batches.cancel('b').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WalletTimeoutError);
    expect(e).toBeInstanceOf(WalletConnectionError);
    expect(f.seen.filter((s) => s.path.endsWith('/cancel'))).toHaveLength(1);
  });

  it("a caller's abort ends the call with its reason and is not retried", async () => {
    const f = await serve(() => 'hang');
    const { client, retries } = clientOn(f);
    const ctl = new AbortController();
    const call = client.wallets.balance({ signal: ctl.signal });
    while (f.seen.length === 0) await new Promise((r) => setImmediate(r));
    ctl.abort(new Error('user cancelled'));
    await expect(call).rejects.toThrow('user cancelled');
    expect(retries).toEqual([]);
    expect(f.seen).toHaveLength(1);
  });

  it('a refused connection is a WalletConnectionError (after the retries a read allows)', async () => {
    const f = await serve(() => ({ status: 200, json: {} }));
    const url = f.url;
    await f.stop();
    fake = undefined;
    const client = new WalletClient({ baseUrl: url, apiKey: 'k', sleep: async () => {}, maxRetries: 1 });
    await expect(client.wallets.balance()).rejects.toBeInstanceOf(WalletConnectionError);
  });

  it('a cursor listing is an async iterator that follows nextCursor to the end', async () => {
    const pages: Record<string, { items: { id: string }[]; nextCursor: string | null }> = {
      '': { items: [{ id: 'm1' }, { id: 'm2' }], nextCursor: 'c2' },
      c2: { items: [{ id: 'm3' }], nextCursor: 'c3' },
      c3: { items: [], nextCursor: null },
    };
    const f = await serve((req) => ({ status: 200, json: { ...pages[req.query.get('cursor') ?? '']!, hasMore: false } }));
    const { client } = clientOn(f);
    const ids: string[] = [];
    for await (const m of client.movements.list({ rail: 'BREB', limit: '2' } as never)) ids.push((m as { id: string }).id);
    expect(ids).toEqual(['m1', 'm2', 'm3']);
    expect(f.seen.map((s) => [s.query.get('cursor'), s.query.get('rail'), s.query.get('limit')])).toEqual([
      [null, 'BREB', '2'],
      ['c2', 'BREB', '2'],
      ['c3', 'BREB', '2'],
    ]);
    // Lazy, restartable, and toArray stops early.
    const list = client.movements.list();
    expect(f.seen).toHaveLength(3);
    expect((await list.toArray(1)).map((m) => (m as { id: string }).id)).toEqual(['m1']);
    expect(f.seen).toHaveLength(4);
    expect(await list.toArray()).toHaveLength(3);
  });

  it('deposits are listed in the cursor style (an empty cursor on the first page)', async () => {
    const f = await serve((req) => ({
      status: 200,
      json: req.query.get('cursor') === '' ? { items: [{ id: 'd1' }], nextCursor: 'n' } : { items: [{ id: 'd2' }], nextCursor: null },
    }));
    const { client } = clientOn(f);
    expect((await client.deposits.list().toArray()).map((d) => (d as { id: string }).id)).toEqual(['d1', 'd2']);
    expect(f.seen.map((s) => s.query.get('cursor'))).toEqual(['', 'n']);
  });

  it('counterparties: a create retried after a 503 keeps its Idempotency-Key and body; verify posts {}; the 409 of a verification in progress is thrown as is', async () => {
    const CPTY = { id: 'cpty_aaaaaaaaaaaaaaaaaaaaaaaa', verification: { status: 'PENDING' } };
    const f = await serve((req, n) => {
      if (req.method === 'POST' && req.path === '/counterparties') return n === 1 ? err(503, 'SERVICE_UNAVAILABLE') : { status: 201, json: CPTY };
      if (req.path.endsWith('/verify')) return err(409, 'COUNTERPARTY_VERIFICATION_IN_PROGRESS');
      return { status: 200, json: req.query.get('cursor') ? { items: [{ id: 'c2' }], nextCursor: null } : { items: [{ id: 'c1' }], nextCursor: 'n' } };
    });
    const { client } = clientOn(f);
    const body = { name: 'Proveedor', bankAccount: ACCOUNT, tags: ['nomina'] };
    expect(await client.counterparties.create(body)).toEqual(CPTY);
    const [a, b] = f.seen as [Seen, Seen];
    expect(a.headers['idempotency-key']).toMatch(UUID);
    expect(b.headers['idempotency-key']).toBe(a.headers['idempotency-key']);
    expect(JSON.parse(b.body)).toEqual(body);

    const refused = await client.counterparties.verify(CPTY.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WalletApiError);
    expect(refused).toMatchObject({ status: 409, error: 'COUNTERPARTY_VERIFICATION_IN_PROGRESS' });
    const verify = f.seen[2]!;
    expect([verify.method, verify.path, verify.body, verify.headers['idempotency-key']]).toEqual([
      'POST',
      `/counterparties/${CPTY.id}/verify`,
      '{}',
      undefined,
    ]);
    expect(f.seen).toHaveLength(3);

    const listed = await client.counterparties.list({ tag: 'nomina', rail: 'ACH' }).toArray();
    expect(listed.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(f.seen.slice(3).map((s) => [s.query.get('tag'), s.query.get('rail'), s.query.get('cursor')])).toEqual([
      ['nomina', 'ACH', null],
      ['nomina', 'ACH', 'n'],
    ]);
  });

  it('a cursor the API hands back twice stops the iteration instead of looping', async () => {
    const f = await serve(() => ({ status: 200, json: { items: [{ id: 'x' }], nextCursor: 'same' } }));
    const { client } = clientOn(f);
    await expect(client.collectKeys.list().toArray()).rejects.toThrow('twice');
    expect(f.seen.map((s) => s.query.get('cursor'))).toEqual([null, 'same']);
  });

  it('binary answers (receipt PDF, QR PNG) come as bytes, CSV as text; a batch can be created from CSV', async () => {
    const pdf = Buffer.from('%PDF-1.7\n%binary\xff\xfe', 'latin1');
    const f = await serve((req) =>
      req.path.endsWith('.pdf')
        ? { status: 200, raw: pdf, type: 'application/pdf' }
        : req.path.endsWith('.csv')
          ? { status: 200, raw: 'a,b\n1,2\n', type: 'text/csv' }
          : { status: 201, json: { id: 'b1' } },
    );
    const { client } = clientOn(f);
    const bytes = await client.movements.receipt('7f0c7a52-5d3e-4c59-9d43-1f1f3b6c8e11');
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(bytes).equals(pdf)).toBe(true);
    expect(await client.batches.resultsCsv('b1')).toBe('a,b\n1,2\n');
    await client.batches.create({ csv: 'amount,keyValue\n1000,3001234567\n', mode: 'valid_only' } as never);
    const created = f.seen.at(-1)!;
    expect(created.path).toBe('/transfers/batches/csv');
    expect(created.headers['content-type']).toBe('text/csv');
    expect(created.body).toBe('amount,keyValue\n1000,3001234567\n');
    expect(created.query.get('mode')).toBe('valid_only');
    expect(created.headers['idempotency-key']).toMatch(UUID);
  });

  it('covers every client operation, with an Idempotency-Key exactly where the document declares one', async () => {
    const f = await serve((req) => ({
      status: 200,
      json: req.method === 'GET' && !/\/[^/]*\d[^/]*$/.test(req.path) ? { items: [], nextCursor: null } : { ok: true },
    }));
    const { client } = clientOn(f);
    const id = '7f0c7a52-5d3e-4c59-9d43-1f1f3b6c8e11';
    const any = {} as never;
    const calls: [keyof typeof operations, () => Promise<unknown>][] = [
      ['getBalance', () => client.wallets.balance()],
      ['getBalanceAt', () => client.wallets.balanceAt(any)],
      ['getStatement', () => client.wallets.statement(any)],
      ['createWalletMove', () => client.wallets.move({ from: 'ACH', to: 'BREB', amountCents: 100 })],
      ['getWalletMove', () => client.wallets.getMove(id)],
      ['getWalletBalanceAlerts', () => client.wallets.alerts()],
      ['setWalletBalanceAlert', () => client.wallets.setAlert('BREB', { lowThresholdCents: 100 })],
      ['listWalletBalanceAlertEvents', () => client.wallets.alertHistory({ rail: 'ACH' }).toArray()],
      ['listTransactions', () => client.movements.list().toArray()],
      ['getTransaction', () => client.movements.get(id)],
      ['getTransactionReceipt', () => client.movements.receipt(id)],
      ['getDepositReceipt', () => client.deposits.receipt(id)],
      ['resolveKey', () => client.transfers.resolveKey({ keyValue: '3001234567' })],
      ['quoteBreb', () => client.transfers.quote({ amount: 100, keyValue: '3001234567' })],
      ['quoteAch', () => client.transfers.quoteAch({ amount: 100 })],
      ['sendTransfer', () => client.transfers.send(SEND)],
      ['createBatch', () => client.batches.create(any)],
      ['createBatchCsv', () => client.batches.create({ csv: 'amount\n100\n' })],
      ['listBatches', () => client.batches.list().toArray()],
      ['executeBatch', () => client.batches.execute(id)],
      ['cancelBatch', () => client.batches.cancel(id)],
      ['getBatch', () => client.batches.get(id)],
      ['listBatchItems', () => client.batches.items('batch').toArray()],
      ['getBatchResultsCsv', () => client.batches.resultsCsv(id)],
      ['createPseDeposit', () => client.deposits.createPse(any)],
      ['shareDepositByEmail', () => client.deposits.shareByEmail(id, { recipientEmail: 'a@example.com' })],
      ['listDeposits', () => client.deposits.list().toArray()],
      ['createCollectKey', () => client.collectKeys.create({ externalId: 'c1', name: 'Cliente' })],
      ['listCollectKeys', () => client.collectKeys.list().toArray()],
      ['getCollectKey', () => client.collectKeys.get(id)],
      ['deleteCollectKey', () => client.collectKeys.delete(id)],
      ['issueCollectKeyQr', () => client.collectKeys.issueQr(id)],
      ['getCollectKeyQrPng', () => client.collectKeys.qrPng(id)],
      ['createCobro', () => client.cobros.create({ reference: 'FAC-1', amountCents: 10_000, methods: ['BREB_QR'] })],
      ['listCobros', () => client.cobros.list().toArray()],
      ['getCobro', () => client.cobros.get(id)],
      ['cancelCobro', () => client.cobros.cancel(id)],
      ['getCobroQrPng', () => client.cobros.qrPng(id)],
      ['getCobroSettings', () => client.cobros.settings()],
      ['setCobroSettings', () => client.cobros.setSettings({ amountToleranceCents: 100, amountToleranceBps: 0 })],
      ['listUnmatchedPayments', () => client.cobros.unmatchedPayments().toArray()],
      ['attachCobroPayment', () => client.cobros.attachPayment(id, 'dep_000000000000000000000000')],
      ['createCounterparty', () => client.counterparties.create({ name: 'Proveedor', bankAccount: ACCOUNT })],
      ['listCounterparties', () => client.counterparties.list({ status: 'VERIFIED' }).toArray()],
      ['getCounterparty', () => client.counterparties.get(id)],
      ['updateCounterparty', () => client.counterparties.update(id, { tags: ['nomina'] })],
      ['deleteCounterparty', () => client.counterparties.delete(id)],
      ['verifyCounterparty', () => client.counterparties.verify(id)],
      [
        'createSchedule',
        () =>
          client.schedules.create({
            recurrence: { kind: 'WEEKLY', dayOfWeek: 'FRI', time: '09:00' },
            action: { kind: 'MOVE', from: 'ACH', to: 'BREB', amountCents: 100 },
          }),
      ],
      ['listSchedules', () => client.schedules.list({ status: 'ACTIVE' }).toArray()],
      ['getSchedule', () => client.schedules.get(id)],
      ['updateSchedule', () => client.schedules.update(id, { status: 'PAUSED' })],
      ['cancelSchedule', () => client.schedules.cancel(id)],
      ['listScheduleRuns', () => client.schedules.runs(id).toArray()],
      ['projectSchedules', () => client.schedules.projection({ days: 7 })],
      ['getApprovalPolicy', () => client.approvalPolicy.get()],
      ['listApprovalPolicyVersions', () => client.approvalPolicy.versions({ limit: 10 }).toArray()],
      ['assignBrebDeposit', () => client.deposits.assign(id, {})],
      ['returnBrebDeposit', () => client.deposits.return(id, {})],
      ['createDepositReturn', () => client.deposits.createReturn(id, { reason: 'OVERPAYMENT', amountCents: 100 })],
      ['listDepositReturns', () => client.deposits.returns(id)],
      ['listAchBanks', () => client.dictionaries.achBanks()],
      ['createWebhookEndpoint', () => client.webhooks.endpoints.create({ url: 'https://example.com/h', events: ['transfer.completed'] })],
      ['listWebhookEndpoints', () => client.webhooks.endpoints.list()],
      ['getWebhookEndpoint', () => client.webhooks.endpoints.get(id)],
      ['updateWebhookEndpoint', () => client.webhooks.endpoints.update(id, { enabled: false })],
      ['deleteWebhookEndpoint', () => client.webhooks.endpoints.delete(id)],
      ['rotateWebhookSecret', () => client.webhooks.endpoints.rotateSecret(id)],
      ['testWebhookEndpoint', () => client.webhooks.endpoints.test(id)],
      ['listWebhookDeliveries', () => client.webhooks.deliveries.list().toArray()],
      ['getWebhookDelivery', () => client.webhooks.deliveries.get(id)],
      ['replayWebhookDelivery', () => client.webhooks.deliveries.replay(id)],
    ];
    expect(calls.map(([op]) => op).sort()).toEqual(Object.keys(operations).sort());
    for (const [op, call] of calls) {
      const before = f.seen.length;
      await call();
      const req = f.seen[before]!;
      const spec = operations[op];
      const template = new RegExp(`^${spec.path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      expect([op, req.method, template.test(req.path)]).toEqual([op, spec.method, true]);
      expect([op, req.headers['idempotency-key'] !== undefined]).toEqual([op, spec.idempotencyKey]);
    }
  });

  it('refuses a missing or relative base URL and a missing key', () => {
    expect(() => new WalletClient({ baseUrl: '', apiKey: 'k' })).toThrow('baseUrl is required');
    expect(() => new WalletClient({ baseUrl: '/api', apiKey: 'k' })).toThrow('absolute');
    expect(() => new WalletClient({ baseUrl: 'http://127.0.0.1:1', apiKey: '' })).toThrow('apiKey');
    expect(() => new WalletClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', timeoutMs: -1 })).toThrow('timeoutMs');
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-29T10:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('Sun, 29 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Sun, 29 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('verifyWebhook', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const body = JSON.stringify({ id: 'evt_1', type: 'transfer.completed', createdAt: '2026-11-29T10:00:00.000000Z', data: { id: 't1', status: 'COMPLETED' } });
  const signed = (payload = body, at = new Date()) => {
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)) };
    return { ...headers, 'webhook-signature': new Webhook(secret).sign('evt_1', at, payload) };
  };

  it('accepts a delivery signed by the reference library, from a header object, a Headers and bytes', () => {
    const h = signed();
    expect(verifyWebhook(body, h, secret)).toMatchObject({ id: 'evt_1', type: 'transfer.completed', data: { status: 'COMPLETED' } });
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(h), secret).id).toBe('evt_1');
    const upper = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toUpperCase(), [v]]));
    expect(verifyWebhook(body, upper, secret).id).toBe('evt_1');
  });

  it('refuses a changed body, another secret, an old timestamp and a missing signature', () => {
    const h = signed();
    expect(() => verifyWebhook(body.replace('COMPLETED', 'FAILED'), h, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, h, `whsec_${Buffer.alloc(32, 8).toString('base64')}`)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, signed(body, new Date(Date.now() - 10 * 60_000)), secret)).toThrow(WebhookVerificationError);
    const { 'webhook-signature': _s, ...unsigned } = h;
    expect(() => verifyWebhook(body, unsigned, secret)).toThrow(WebhookVerificationError);
  });
});
