// An integrator's flow on openapi-typescript 7 types + openapi-fetch, generated from the served
// document with default options: balance → resolve → quote → send (BREB, by key) → poll the
// transfer → list movements page by page (nextCursor) → PSE deposit link → collect key.
import createClient from 'openapi-fetch';
import type { paths } from './generated/schema.js';
import { FINAL_STATUSES, type FlowEnv, type FlowReport } from './flow-env.js';

function failed(step: string, error: unknown, response: Response): Error {
  return new Error(`${step}: HTTP ${response.status} ${JSON.stringify(error)}`);
}

export async function runFlow(env: FlowEnv): Promise<FlowReport> {
  const api = createClient<paths>({ baseUrl: env.baseUrl, headers: { Authorization: `Bearer ${env.apiKey}` } });

  const balance = await api.GET('/wallets/balance');
  if (!balance.data) throw failed('balance', balance.error, balance.response);
  const breb = balance.data.wallets.find((w) => w.rail === 'BREB');
  if (!breb) throw new Error('balance: no BREB wallet');

  // keyType is optional (AUTO) on resolve-key and quote: the first calls compile without it.
  const resolved = await api.POST('/transfers/resolve-key', { body: { keyValue: env.keyValue } });
  if (!resolved.data) throw failed('resolve-key', resolved.error, resolved.response);
  const quote = await api.POST('/transfers/quote', { body: { amount: env.amount, keyValue: env.keyValue } });
  if (!quote.data) throw failed('quote', quote.error, quote.response);
  if (!quote.data.canAfford || BigInt(breb.availableCents) < BigInt(quote.data.totalCost)) throw new Error(`quote: cannot afford ${quote.data.totalCost}`);

  const sent = await api.POST('/transfers/send', {
    params: { header: { 'Idempotency-Key': `${env.runId}-send` } },
    body: {
      amount: env.amount,
      destination: { brebKey: { type: resolved.data.keyType, value: resolved.data.keyValue } },
      targetName: resolved.data.recipient.fullName,
      targetDocument: resolved.data.recipient.idValue,
      reference: `${env.runId}-ref`,
      description: 'Pago proveedor',
    },
  });
  if (!sent.data) throw failed('send', sent.error, sent.response);
  const transferId = sent.data.id;

  let status: string = sent.data.status;
  for (const until = Date.now() + 30_000; !FINAL_STATUSES.includes(status) && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 200));
    const t = await api.GET('/wallets/transactions/{id}', { params: { path: { id: transferId } } });
    if (!t.data) throw failed('transaction', t.error, t.response);
    status = t.data.status;
  }

  const movementIds: string[] = [];
  let pages = 0;
  let cursor: string | undefined;
  do {
    const page = await api.GET('/wallets/transactions', { params: { query: cursor === undefined ? {} : { cursor } } });
    if (!page.data) throw failed('transactions', page.error, page.response);
    pages += 1;
    movementIds.push(...page.data.items.map((m) => m.id));
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor !== undefined && pages < 100);

  const deposit = await api.POST('/deposits/pse', {
    params: { header: { 'Idempotency-Key': `${env.runId}-pse` } },
    body: {
      amountCents: 150_000,
      payerDocumentTypeId: 1,
      payerDocumentNumber: '1020304050',
      payerFirstName: 'Ana María',
      payerLastName: 'Pérez Gómez',
      payerEmail: 'ana.perez@example.com',
      internalRef: `${env.runId}-pse`,
    },
  });
  if (!deposit.data) throw failed('pse deposit', deposit.error, deposit.response);

  const key = await api.POST('/breb/collect-keys', { body: { externalId: `${env.runId}-cliente`, name: 'Tienda Uno' } });
  if (!key.data) throw failed('collect key', key.error, key.response);

  return {
    availableBrebCents: breb.availableCents,
    quoteTotalCost: quote.data.totalCost,
    transferId,
    finalStatus: status,
    pages,
    movementIds,
    paygatewayUrl: deposit.data.paygatewayUrl,
    collectKeyValue: key.data.key.value,
    baseUrlUsed: env.baseUrl,
  };
}
