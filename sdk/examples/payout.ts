// A Bre-B payout: balance → resolve the key → quote → send (idempotent) → wait for the rail → receipt PDF.
//   WALLET_BASE_URL=… WALLET_API_KEY=wk_test_… node examples/payout.ts
// Optional: PAYOUT_KEY (a Bre-B key, default 3001112233), PAYOUT_AMOUNT_CENTS (default 250000),
// PAYOUT_IDEMPOTENCY_KEY (e.g. your invoice id: running the script again then never pays twice),
// RECEIPT_PATH (where to write the receipt, default ./receipt-<id>.pdf).
import { writeFile } from 'node:fs/promises';
import { WalletApiError } from '@wallet/client';
import { clientFromEnv, pesos } from './env.ts';

const wallet = clientFromEnv();
const keyValue = process.env.PAYOUT_KEY ?? '3001112233';
const amount = Number(process.env.PAYOUT_AMOUNT_CENTS ?? 250_000);

try {
  const { wallets } = await wallet.wallets.balance();
  for (const w of wallets) console.log(`${w.rail} available ${pesos(w.availableCents)}`);

  const holder = await wallet.transfers.resolveKey({ keyValue });
  console.log(`Key ${holder.keyValue} (${holder.keyType}) belongs to ${holder.recipient.fullName}`);

  const quote = await wallet.transfers.quote({ amount, keyValue: holder.keyValue, keyType: holder.keyType });
  console.log(`Quote: ${pesos(quote.amount)} + fees ${pesos(quote.feeBreakdown.totalCharged)} = ${pesos(quote.totalCost)}`);
  if (!quote.canAfford) throw new Error(quote.message ?? 'insufficient balance');

  const sent = await wallet.transfers.send(
    {
      amount,
      destination: { brebKey: { type: holder.keyType, value: holder.keyValue } },
      targetName: holder.recipient.fullName,
      targetDocument: holder.recipient.idValue,
      description: 'Pago de ejemplo',
    },
    process.env.PAYOUT_IDEMPOTENCY_KEY ? { idempotencyKey: process.env.PAYOUT_IDEMPOTENCY_KEY } : undefined,
  );
  console.log(`Transfer ${sent.id} accepted: ${sent.status}`);

  const final = await wallet.transfers.waitUntilFinal(sent.id, { intervalMs: 250, timeoutMs: 60_000 });
  console.log(`Transfer ${final.id}: ${final.status}`);
  if (final.status !== 'COMPLETED') process.exit(1);

  // The receipt is issued from the completion event, moments after it: retry a 404 briefly.
  let pdf: Uint8Array | undefined;
  for (let attempt = 1; !pdf; attempt++) {
    try {
      pdf = await wallet.movements.receipt(final.id);
    } catch (err) {
      if (!(err instanceof WalletApiError && err.status === 404 && attempt < 20)) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const path = process.env.RECEIPT_PATH ?? `receipt-${final.id}.pdf`;
  await writeFile(path, pdf);
  console.log(`Receipt: ${path} (${pdf.byteLength} bytes)`);
} catch (err) {
  if (err instanceof WalletApiError) console.error(`API refused: ${err.status} ${err.error}: ${err.message} (request ${err.requestId})`);
  else console.error(err);
  process.exit(1);
}
