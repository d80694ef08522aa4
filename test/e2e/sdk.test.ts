import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@wallet/platform/testing';
import { WalletApiError, WalletClient, verifyWebhook, WebhookVerificationError, type ListQuery, type Movement, type RetryEvent } from '@wallet/client';
import { startStack } from '../support/stack.js';
import { checkDocumented } from '../support/openapi-check.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Company = Awaited<ReturnType<Stack['provision']>>;

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const sdkDir = join(repo, 'sdk');

/** A webhook receiver on loopback that keeps each delivery's raw body and headers. */
class Receiver {
  hits: { raw: string; headers: IncomingHttpHeaders; body: any }[] = [];
  url = '';
  private server: Server | undefined;
  async start() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.hits.push({ raw, headers: req.headers, body: JSON.parse(raw) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/wallet-events`;
  }
  async stop() {
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

/**
 * The SDK (@wallet/client, as built into sdk/dist) driving the real stack: gateway, transfer, ledger,
 * sandbox rails, receipts, deposits, collect keys and webhooks. Every answer the SDK receives is also
 * checked against the document the gateway serves (the `fetch` option wraps checkDocumented).
 */
describe('@wallet/client against the real stack', () => {
  let stack: Stack;
  let co: Company;
  const rx = new Receiver();

  /** The SDK's fetch: the real one, each answer checked against GET /openapi.json; `onAnswer` sees them. */
  const documentedFetch =
    (onAnswer?: (req: Request, res: Response) => void | Promise<void>) =>
    async (req: Request): Promise<Response> => {
      const res = await fetch(req);
      const type = res.headers.get('content-type') ?? '';
      const text = /pdf|png/.test(type) ? undefined : await res.clone().text();
      const url = new URL(req.url);
      await checkDocumented(stack.gateway.url, { method: req.method, path: url.pathname + url.search, status: res.status, headers: res.headers, text });
      await onAnswer?.(req, res);
      return res;
    };

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, collectKeys: true, receipts: true, webhooks: true });
    co = await stack.provision('Cliente SDK S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 10_000_000, reference: 'sdk-seed-breb' });
    await rx.start();
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await rx.stop();
  });

  it('a whole flow: balance → quote → send (a lost answer retried safely) → COMPLETED → receipt → movements → PSE link → collect key + QR → verified webhook', async () => {
    const retries: RetryEvent[] = [];
    const sendAnswers: Response[] = [];
    let loseNextSendAnswer = true;
    const wallet = new WalletClient({
      baseUrl: stack.gateway.url,
      apiKey: co.writeKey,
      timeoutMs: 30_000,
      retryBaseDelayMs: 50,
      onRetry: (e) => retries.push(e),
      // The first send's answer is lost after the server acted on it, as when a connection drops.
      fetch: documentedFetch(async (req, res) => {
        if (req.method !== 'POST' || new URL(req.url).pathname !== '/transfers/send') return;
        sendAnswers.push(res);
        if (loseNextSendAnswer) {
          loseNextSendAnswer = false;
          throw new TypeError('fetch failed: the connection was lost before the answer arrived');
        }
      }),
    });

    // The webhook endpoint first, so the send's completion is delivered to it.
    const endpoint = await wallet.webhooks.endpoints.create({ url: rx.url, events: ['transfer.completed'], description: 'SDK e2e' });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect((await wallet.webhooks.endpoints.list()).map((e) => e.id)).toContain(endpoint.id);

    const balance = await wallet.wallets.balance();
    const breb = balance.wallets.find((w) => w.rail === 'BREB')!;
    expect(breb.availableCents).toBe('10000000');

    const holder = await wallet.transfers.resolveKey({ keyValue: '3001112233' });
    expect(holder).toMatchObject({ found: true, keyType: 'PHONE', keyValue: '3001112233' });
    const quote = await wallet.transfers.quote({ amount: 250_000, keyValue: holder.keyValue });
    expect(quote.canAfford).toBe(true);
    expect(quote.amount).toBe(250_000);

    const sent = await wallet.transfers.send({
      amount: 250_000,
      destination: { brebKey: { type: holder.keyType as 'PHONE', value: holder.keyValue } },
      targetName: holder.recipient.fullName,
      targetDocument: holder.recipient.idValue,
      description: 'Pago SDK',
    });
    // The first attempt created the transfer; its answer was lost; the retry (same key, same body) got it back.
    expect(retries).toEqual([expect.objectContaining({ operationId: 'sendTransfer', retry: 1, reason: 'network', idempotencyKey: expect.any(String) })]);
    expect(sendAnswers).toHaveLength(2);
    expect(sendAnswers[0]!.status).toBe(201);
    expect(sendAnswers[1]!.headers.get('idempotent-replayed')).toBe('true');
    expect(sent).toMatchObject({ status: 'PENDING', amount: 250_000, rail: 'BREB' });

    const final = await wallet.transfers.waitUntilFinal(sent.id, { intervalMs: 100, timeoutMs: 30_000 });
    expect(final).toMatchObject({ id: sent.id, status: 'COMPLETED', type: 'TRANSFER_OUT' });
    const after = (await wallet.wallets.balance()).wallets.find((w) => w.rail === 'BREB')!;
    expect(BigInt(after.availableCents)).toBe(10_000_000n - BigInt(quote.totalCost)); // charged once

    // The receipt is issued from the completion event, moments later.
    const pdf = await eventually(
      () => wallet.movements.receipt(sent.id).catch((e: unknown) => (e instanceof WalletApiError && e.status === 404 ? undefined : Promise.reject(e))),
      20_000,
      200,
    );
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');

    // Movements through the cursor iterator, one per page (the credit and the send: two pages at least).
    // `limit` is cast: its type follows the document (a digit string or an integer), both serialise alike.
    const pages: Movement[][] = [];
    for await (const page of wallet.movements.list({ limit: 1 } as unknown as ListQuery<'listTransactions'>).pages()) pages.push(page.items);
    const movements = pages.flat();
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages.every((p) => p.length <= 1)).toBe(true);
    expect(movements.map((m) => m.type)).toEqual(expect.arrayContaining(['TRANSFER_OUT']));
    expect(movements.filter((m) => m.type === 'TRANSFER_OUT').map((m) => m.id)).toEqual([sent.id]); // exactly one transfer
    const all: Movement[] = [];
    for await (const m of wallet.movements.list()) all.push(m);
    expect(all.map((m) => m.id)).toEqual(movements.map((m) => m.id));

    // A PSE payment link, then the deposits listing through its cursor.
    const link = await wallet.deposits.createPse({
      amountCents: 150_000,
      payerDocumentTypeId: 1,
      payerDocumentNumber: '1020304050',
      payerFirstName: 'Ana',
      payerLastName: 'Pérez',
      payerEmail: 'ana.perez@example.com',
      internalRef: 'sdk-pse-1',
    });
    expect(link).toMatchObject({ status: 'PENDING_CONFIRM', amountCents: 150_000, paygatewayUrl: expect.stringMatching(/^https?:\/\//) });
    expect((await wallet.deposits.list().toArray()).map((d) => d.id)).toContain(link.id);

    // A collect key, its QR and the PNG.
    const key = await wallet.collectKeys.create({ externalId: 'sdk-cliente-1', name: 'Cliente SDK' });
    expect(key).toMatchObject({ externalId: 'sdk-cliente-1', state: 'ACTIVE', key: { value: expect.stringMatching(/^@/) } });
    const { qr } = await wallet.collectKeys.issueQr(key.id);
    const png = await wallet.collectKeys.qrPng(qr.id);
    expect(Buffer.from(png.subarray(0, 8)).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect((await wallet.collectKeys.list({ externalId: 'sdk-cliente-1' }).toArray()).map((k) => k.id)).toEqual([key.id]);

    // The completion, delivered to the endpoint and verified with the endpoint's secret.
    const hit = await eventually(async () => rx.hits.find((h) => h.body.type === 'transfer.completed' && h.body.data.id === sent.id), 20_000, 100);
    const event = verifyWebhook<{ id: string; status: string }>(hit.raw, hit.headers, endpoint.secret);
    expect(event).toMatchObject({ type: 'transfer.completed', data: { id: sent.id, status: 'COMPLETED' } });
    expect(() => verifyWebhook(hit.raw.replace('COMPLETED', 'FAILED'), hit.headers, endpoint.secret)).toThrow(WebhookVerificationError);
    const deliveries = await wallet.webhooks.deliveries.list({ endpointId: endpoint.id }).toArray();
    expect(deliveries.some((d) => d.eventId === event.id)).toBe(true);
  });

  it('refusals are typed errors with the code, the Spanish message, details and the request id', async () => {
    const wallet = new WalletClient({ baseUrl: stack.gateway.url, apiKey: co.writeKey, fetch: documentedFetch() });
    const reader = new WalletClient({ baseUrl: stack.gateway.url, apiKey: co.readKey, fetch: documentedFetch() });

    const cap = await wallet.transfers.quote({ amount: 1_200_000_001, keyValue: '3001234567' }).catch((e: unknown) => e);
    expect(cap).toBeInstanceOf(WalletApiError);
    expect(cap).toMatchObject({ status: 422, error: 'AMOUNT_EXCEEDS_BREB_CAP', message: expect.any(String), requestId: expect.any(String) });

    const bad = (await wallet.transfers.quote({ amount: 99, keyValue: '3001234567' }).catch((e: unknown) => e)) as WalletApiError;
    expect(bad).toMatchObject({ status: 400, error: 'INVALID_REQUEST' });
    expect(bad.details).toEqual({ fields: [expect.objectContaining({ path: expect.stringContaining('amount'), message: expect.any(String) })] });

    const scope = (await reader.transfers.resolveKey({ keyValue: '3001234567' }).catch((e: unknown) => e)) as WalletApiError;
    expect(scope).toMatchObject({ status: 403, error: 'INSUFFICIENT_SCOPE', body: expect.objectContaining({ required: 'WRITE', granted: 'READ' }) });

    const missing = await reader.movements.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, error: 'TRANSACTION_NOT_FOUND' });

    const badKey = new WalletClient({ baseUrl: stack.gateway.url, apiKey: 'wk_test_not-a-key', fetch: documentedFetch() });
    await expect(badKey.wallets.balance()).rejects.toMatchObject({ status: 401 });
  });

  it('the committed sdk/openapi.json and generated types match the document this gateway serves', async () => {
    // Regenerated from GET /openapi.json in a child process (async: this process serves the gateway).
    const out = await run(process.execPath, [join(sdkDir, 'scripts', 'generate.mjs'), '--check', `${stack.gateway.url}/openapi.json`], {});
    expect(out.stdout).toContain('the generated files match the document');
    expect(out.code).toBe(0);
  });

  describe('examples (sdk/examples), each run as a program against the stack', () => {
    let ex: Company;
    let work: string;
    let env: Record<string, string>;
    beforeAll(async () => {
      ex = await stack.provision('Ejemplos S.A.S.', { taxRegime: 'COMMON' });
      await stack.admin('PATCH', `/admin/companies/${ex.id}`, { rateLimitMultiplier: 1000 });
      await stack.admin('POST', `/admin/companies/${ex.id}/wallets/BREB/credit`, { amountCents: 5_000_000, reference: 'examples-seed' });
      work = mkdtempSync(join(tmpdir(), 'sdk-examples-'));
      env = { WALLET_BASE_URL: stack.gateway.url, WALLET_API_KEY: ex.writeKey };
    });
    afterAll(() => rmSync(work, { recursive: true, force: true }));

    it('payout: resolves, quotes, sends, waits for COMPLETED and saves the receipt', async () => {
      const receipt = join(work, 'receipt.pdf');
      const r = await example('payout.ts', { ...env, RECEIPT_PATH: receipt, PAYOUT_AMOUNT_CENTS: '120000' });
      expect(r.stderr).not.toMatch(/API refused/);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Transfer [0-9a-f-]{36}: COMPLETED/);
      expect(readFileSync(receipt).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    });

    it('pse-link: creates a PSE link and lists the deposits', async () => {
      const r = await example('pse-link.ts', env);
      expect(r.code).toBe(0);
      const id = /Deposit (\S+): PENDING_CONFIRM/.exec(r.stdout)?.[1];
      expect(r.stdout).toMatch(/PSE link for .*: https?:\/\//);
      expect(r.stdout).toContain(`  ${id} PENDING_CONFIRM`);
    });

    it('collect-key: registers a key, issues its QR and saves the PNG', async () => {
      const qrPath = join(work, 'qr.png');
      const r = await example('collect-key.ts', { ...env, CUSTOMER_ID: 'ejemplo-1', QR_PATH: qrPath });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Collect key @\w+ \(\S+\) for ejemplo-1: ACTIVE/);
      expect(r.stdout).toContain('1 key(s) for ejemplo-1');
      expect(readFileSync(qrPath).subarray(1, 4).toString('latin1')).toBe('PNG');
    });

    it('webhook-receiver: registers itself, verifies the ping it receives, and removes its endpoint', async () => {
      const r = await example('webhook-receiver.ts', { ...env, WEBHOOK_PORT: '0', WEBHOOK_MAX_EVENTS: '1' });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/registered endpoint we_\S+/);
      expect(r.stdout).toMatch(/verified webhook\.ping evt_\S+/);
      const reader = new WalletClient({ baseUrl: stack.gateway.url, apiKey: ex.readKey, fetch: documentedFetch() });
      expect(await reader.webhooks.endpoints.list()).toEqual([]);
    });

    it('an example without its environment says what to set and exits 2', async () => {
      const r = await example('payout.ts', { WALLET_BASE_URL: '', WALLET_API_KEY: '' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Set WALLET_BASE_URL');
    });

    const example = (file: string, vars: Record<string, string>) =>
      run(process.execPath, [join(sdkDir, 'examples', file)], { ...vars, NODE_NO_WARNINGS: '1' }, work);
  });
});

/** Runs a program without blocking this process (which serves the stack it talks to). */
function run(cmd: string, args: string[], vars: Record<string, string>, cwd = repo) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...vars }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) console.log(`${args.join(' ')} exited ${code}\n${stdout}\n${stderr}`);
      resolve({ code, stdout, stderr });
    });
  });
}
