import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bogotaDateOf } from '@wallet/platform';
import { eventually, meshClient } from '@wallet/platform/testing';
import { reconciliationV1 } from '@wallet/proto';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * No personal data and no full account number in any log line of any process (ARCHITECTURE
 * "Observability"): a realistic run through the real gateway and every service, every line captured
 * at trace level, then every line searched for every raw value the run used. And no full account
 * number at rest in any schema of the product.
 */
describe('personal data never reaches the logs', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let receiver: Server;
  let receiverUrl = '';
  const delivered: string[] = [];

  // Raw values of this run: Bre-B keys (phone, e-mail, document, alias), documents, e-mails, phones, account numbers.
  const NIT = '901234567-3';
  const PHONE_KEY = '3001112233';
  const EMAIL_KEY = 'juana.perez@correo-ejemplo.com';
  const DOCUMENT_KEY = '1098765432';
  const COLLECT_KEY_VALUE = '@3157654321';
  const COLLECT_PAYER_DOCUMENT = '79123456';
  const ACH_ACCOUNT = '40987654321';
  const ACH_DOCUMENT = '52987654';
  const PSE_PAYER_DOCUMENT = '1032456789';
  const PSE_PAYER_EMAIL = 'laura.gomez@correo-ejemplo.com';
  const PSE_PAYER_PHONE = '3107654321';
  const SHARE_EMAIL = 'contabilidad.cliente@correo-ejemplo.com';
  const raw = new Map<string, string>([
    ['company NIT', NIT],
    ['phone key', PHONE_KEY],
    ['e-mail key', EMAIL_KEY],
    ['document key', DOCUMENT_KEY],
    ['collect key value', COLLECT_KEY_VALUE],
    ['collect key digits', COLLECT_KEY_VALUE.slice(1)],
    ['Bre-B payer document', COLLECT_PAYER_DOCUMENT],
    ['ACH account number', ACH_ACCOUNT],
    ['ACH holder document', ACH_DOCUMENT],
    ['PSE payer document', PSE_PAYER_DOCUMENT],
    ['PSE payer e-mail', PSE_PAYER_EMAIL],
    ['PSE payer phone', PSE_PAYER_PHONE],
    ['share e-mail', SHARE_EMAIL],
  ]);

  const post = (path: string, body?: unknown) => stack.http('POST', path, { token: co.writeKey, body });
  const settled = (id: string) =>
    eventually(
      async () => {
        const r = await stack.http('GET', `/wallets/transactions/${id}`, { token: co.readKey });
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      20_000,
      100,
    );

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        delivered.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
    stack = await startStack({
      transfers: true,
      deposits: true,
      collectKeys: true,
      receipts: true,
      webhooks: true,
      reconciliation: true,
      captureLogs: 'trace',
    });
    co = await stack.provision('Datos Personales S.A.S.', { taxRegime: 'COMMON', nit: NIT });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 10_000_000, reference: 'seed-breb' });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 10_000_000, reference: 'seed-ach' });
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  });

  it('a run with keys, documents, e-mails and an ACH account leaves none of them in any log line', async () => {
    const endpoint = await post('/webhooks/endpoints', { url: receiverUrl, events: ['transfer.completed', 'deposit.paid'] });
    expect(endpoint.status).toBe(201);

    // Collect key with a phone-like alias, paid over Bre-B by a payer with a document.
    const key = await post('/breb/collect-keys', { externalId: 'cliente-datos', name: 'Tienda Datos', keyValue: COLLECT_KEY_VALUE });
    expect(key.status).toBe(201);
    const incoming = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        keyValue: COLLECT_KEY_VALUE,
        amountCents: 150_000,
        payerName: 'Pedro Pérez',
        payerDocument: `CC ${COLLECT_PAYER_DOCUMENT}`,
        payerBank: 'Nequi',
      }),
    });
    expect(incoming.status).toBe(202);
    // A payment to a value no key here holds is refused as retryable (logged, masked).
    await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keyValue: '@3157650000', amountCents: 1_000, payerName: 'X', payerDocument: `CC ${COLLECT_PAYER_DOCUMENT}`, payerBank: 'Nequi' }),
    });

    // Sends to Bre-B keys of each kind (resolved first, as a client does) and to an ACH account.
    const sent: string[] = [];
    for (const [i, value] of [PHONE_KEY, EMAIL_KEY, DOCUMENT_KEY].entries()) {
      const resolved = await post('/transfers/resolve-key', { keyValue: value });
      expect(resolved.status).toBe(200);
      raw.set(`target document of ${resolved.body.keyType}`, resolved.body.recipient.idValue);
      const r = await post('/transfers/send', {
        amount: 120_000 + i,
        destination: { brebKey: { type: resolved.body.keyType, value } },
        targetName: resolved.body.recipient.fullName,
        targetDocument: resolved.body.recipient.idValue,
        reference: `datos-breb-${i}`,
      });
      expect(r.status).toBe(201);
      sent.push(r.body.id);
    }
    const quote = await post('/transfers/quote', { amount: 50_000, keyValue: PHONE_KEY });
    expect(quote.status).toBe(200);
    const ach = await post('/transfers/send', {
      amount: 300_000,
      reference: 'datos-ach-1',
      description: 'Pago proveedor',
      destination: {
        bankAccount: {
          bankId: 1,
          accountTypeId: 20,
          accountNumber: ACH_ACCOUNT,
          documentTypeId: 1,
          documentNumber: ACH_DOCUMENT,
          holderFirstName: 'Ana',
          holderLastName: 'Pérez',
        },
      },
    });
    expect(ach.status).toBe(201);
    sent.push(ach.body.id);
    // A refused account (the sandbox refuses 0000000000) is logged too.
    const refused = await post('/transfers/send', {
      amount: 100_000,
      destination: {
        bankAccount: {
          bankId: 1,
          accountTypeId: 20,
          accountNumber: '0000000000',
          documentTypeId: 1,
          documentNumber: ACH_DOCUMENT,
          holderFirstName: 'Ana',
          holderLastName: 'Pérez',
        },
      },
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);

    // With the directory down: a key registration and a key resolution fail (and are logged).
    const faults = (body: unknown) =>
      fetch(`${stack.sandbox!.url}/sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await faults({ directory: 'down' })).status).toBe(200);
    raw.set('collect key value registered while the directory is down', '@3157659999').set('phone key resolved while the directory is down', '3209876543');
    expect(
      (await post('/breb/collect-keys', { externalId: 'cliente-caido', name: 'Directorio Caído', keyValue: '@3157659999' })).status,
    ).toBeGreaterThanOrEqual(200);
    expect((await post('/transfers/resolve-key', { keyValue: '3209876543' })).status).toBeGreaterThanOrEqual(400);
    expect((await faults({ directory: 'up' })).status).toBe(200);

    // A PSE deposit with a payer's document, e-mail and phone, paid, and its link shared by e-mail.
    const dep = await post('/deposits/pse', {
      amountCents: 400_000,
      payerDocumentTypeId: 1,
      payerDocumentNumber: PSE_PAYER_DOCUMENT,
      payerFirstName: 'Laura',
      payerLastName: 'Gómez',
      payerEmail: PSE_PAYER_EMAIL,
      payerPhone: PSE_PAYER_PHONE,
      internalRef: 'pedido-datos',
    });
    expect(dep.status).toBe(201);
    expect((await post(`/deposits/${dep.body.id}/share-email`, { recipientEmail: SHARE_EMAIL, recipientName: 'Contabilidad' })).status).toBe(200);
    const paid = await fetch(`${stack.sandbox!.url}/sandbox/pse/${dep.body.id}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'APPROVED', payerBank: 'Bancolombia' }),
    });
    expect(paid.status).toBe(200);

    // Everything settles: transfers, deposits (PSE and Bre-B), receipts, webhooks; reads go through every service.
    for (const id of sent) expect((await settled(id)).status).toBe('COMPLETED');
    await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?limit=100', { token: co.readKey });
        const ds = r.body.deposits ?? [];
        return ds.length >= 2 && ds.every((d: any) => d.status === 'ASSIGNED');
      },
      20_000,
      100,
    );
    await eventually(async () => delivered.length >= sent.length + 2, 20_000, 100);
    for (const path of ['/wallets/transactions?limit=50', '/deposits?limit=50', `/breb/collect-keys/${key.body.id}`, `/wallets/transactions/${ach.body.id}`]) {
      expect((await stack.http('GET', path, { token: co.readKey })).status).toBe(200);
    }
    // The receipt (a PDF naming the target and its document) is built from the events.
    await eventually(
      async () => (await stack.http('GET', `/wallets/transactions/${ach.body.id}/receipt.pdf`, { token: co.readKey })).status === 200,
      20_000,
      200,
    );
    expect((await stack.invariants()).violations).toEqual([]);

    // The reconciliation of the day on every rail (an operator's run): the reports carry the same
    // payments (keys, documents, accounts) that its logs must not.
    const recon = meshClient<reconciliationV1.ReconciliationServiceServer>(
      reconciliationV1.ReconciliationServiceClient,
      stack.reconciliation!.address,
      'gateway',
      'reconciliation',
      30_000,
      new Set(['startRun', 'getRun']),
    );
    try {
      const date = bogotaDateOf(new Date());
      for (const rail of ['breb', 'ach', 'pse', 'breb-inbound']) {
        const { run } = await recon.startRun({ rail, date, requestedBy: 'operator:e2e' }, { requestId: `e2e-recon-${rail}` });
        const done = await eventually(
          async () => {
            const r = await recon.getRun({ id: run!.id }, { requestId: `e2e-recon-get-${rail}` });
            return r.status === 'RUNNING' ? undefined : r;
          },
          30_000,
          200,
        );
        expect([rail, done.status]).toEqual([rail, 'RECONCILED']);
      }
    } finally {
      recon.close();
    }

    const lines = stack.logs();
    // The capture saw every process, at debug level and below.
    const services = new Set(lines.map((l) => (JSON.parse(l) as { service?: string }).service));
    for (const s of ['gateway', 'ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'reconciliation', 'sandbox'])
      expect(services).toContain(s);
    expect(lines.some((l) => l.includes('"level":"debug"'))).toBe(true);

    const leaks: string[] = [];
    for (const [what, value] of raw) {
      // As written, and as a URL path or query would carry it (`@` → `%40`).
      const forms = [...new Set([value, encodeURIComponent(value), encodeURIComponent(value).replace(/%20/g, '+')].map((f) => f.toLowerCase()))];
      for (const line of lines) {
        if (forms.some((f) => line.toLowerCase().includes(f))) leaks.push(`${what}: ${line.length > 600 ? `${line.slice(0, 600)}…` : line}`);
      }
    }
    expect(leaks).toEqual([]);
    // The masked forms are what a reader finds instead.
    expect(lines.some((l) => l.includes(`****${ACH_ACCOUNT.slice(-4)}`))).toBe(true);

    // At rest, no schema of the product holds the full account number (the sandbox, a provider, does).
    const { default: pg } = await import('pg');
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows: tables } = await db.query<{ s: string; t: string }>(
        `select table_schema as s, table_name as t from information_schema.tables
          where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema', 'sandbox')`,
      );
      expect(tables.length).toBeGreaterThan(20);
      const holding: string[] = [];
      for (const { s, t } of tables) {
        const { rows } = await db.query<{ n: string }>(`select count(*)::text as n from "${s}"."${t}" x where x::text like $1`, [`%${ACH_ACCOUNT}%`]);
        if (rows[0]?.n !== '0') holding.push(`${s}.${t}`);
      }
      expect(holding).toEqual([]);
    } finally {
      await db.end();
    }
  }, 120_000);
});
