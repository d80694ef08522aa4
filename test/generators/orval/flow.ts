// An integrator's flow on orval with its default client (axios functions), generated from the served
// document with default options. The generated functions use axios' default instance: the base URL
// and the API key are set on it once.
import axios from 'axios';
import { createCollectKey, createPseDeposit, getBalance, getTransaction, listTransactions, quoteBreb, resolveKey, sendTransfer } from './generated/api.js';
import { FINAL_STATUSES, type FlowEnv, type FlowReport } from './flow-env.js';

export async function runFlow(env: FlowEnv): Promise<FlowReport> {
  axios.defaults.baseURL = env.baseUrl;
  axios.defaults.headers.common.Authorization = `Bearer ${env.apiKey}`;

  // Non-2xx answers reject (AxiosError): no status checks needed here.
  const { data: balance } = await getBalance();
  const breb = balance.wallets.find((w) => w.rail === 'BREB');
  if (!breb) throw new Error('balance: no BREB wallet');

  const { data: resolved } = await resolveKey({ keyValue: env.keyValue });
  const { data: quote } = await quoteBreb({ amount: env.amount, keyValue: env.keyValue });
  if (!quote.canAfford || BigInt(breb.availableCents) < BigInt(quote.totalCost)) throw new Error(`quote: cannot afford ${quote.totalCost}`);

  const { data: sent } = await sendTransfer(
    {
      amount: env.amount,
      destination: { brebKey: { type: resolved.keyType, value: resolved.keyValue } },
      targetName: resolved.recipient.fullName,
      targetDocument: resolved.recipient.idValue,
      reference: `${env.runId}-ref`,
      description: 'Pago proveedor',
    },
    { headers: { 'Idempotency-Key': `${env.runId}-send` } },
  );
  const transferId = sent.id;

  let status: string = sent.status;
  for (const until = Date.now() + 30_000; !FINAL_STATUSES.includes(status) && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 200));
    status = (await getTransaction(transferId)).data.status;
  }

  const movementIds: string[] = [];
  let pages = 0;
  let cursor: string | undefined;
  do {
    const { data: page } = await listTransactions(cursor === undefined ? {} : { cursor });
    pages += 1;
    movementIds.push(...page.items.map((m) => m.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages < 100);

  const { data: deposit } = await createPseDeposit(
    {
      amountCents: 150_000,
      payerDocumentTypeId: 1,
      payerDocumentNumber: '1020304050',
      payerFirstName: 'Ana María',
      payerLastName: 'Pérez Gómez',
      payerEmail: 'ana.perez@example.com',
      internalRef: `${env.runId}-pse`,
    },
    { headers: { 'Idempotency-Key': `${env.runId}-pse` } },
  );

  const { data: key } = await createCollectKey({ externalId: `${env.runId}-cliente`, name: 'Tienda Uno' });

  return {
    availableBrebCents: breb.availableCents,
    quoteTotalCost: quote.totalCost,
    transferId,
    finalStatus: status,
    pages,
    movementIds,
    paygatewayUrl: deposit.paygatewayUrl,
    collectKeyValue: key.key.value,
    baseUrlUsed: env.baseUrl,
  };
}
