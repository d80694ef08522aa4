// A PSE payment link: a customer pays it from their bank and the money lands in the ACH wallet.
//   WALLET_BASE_URL=… WALLET_API_KEY=wk_test_… node examples/pse-link.ts
// Optional: PSE_AMOUNT_CENTS (default 150000), PAYER_EMAIL (default pagador@example.com).
import { WalletApiError } from '@wallet/client';
import { clientFromEnv, pesos } from './env.ts';

const wallet = clientFromEnv();

try {
  const link = await wallet.deposits.createPse({
    amountCents: Number(process.env.PSE_AMOUNT_CENTS ?? 150_000),
    payerDocumentTypeId: 1,
    payerDocumentNumber: '1020304050',
    payerFirstName: 'Ana María',
    payerLastName: 'Pérez',
    payerEmail: process.env.PAYER_EMAIL ?? 'pagador@example.com',
    internalRef: process.env.PSE_REFERENCE ?? `factura-${Date.now()}`,
  });
  console.log(`PSE link for ${pesos(link.amountCents)}: ${link.paygatewayUrl}`);
  console.log(`Deposit ${link.id}: ${link.status}`);

  // The latest deposits, through the cursor iterator (stops after five).
  let n = 0;
  for await (const d of wallet.deposits.list()) {
    console.log(`  ${d.id} ${d.status} ${pesos(d.amountCents)}`);
    if (++n === 5) break;
  }
} catch (err) {
  if (err instanceof WalletApiError) console.error(`API refused: ${err.status} ${err.error}: ${err.message}`);
  else console.error(err);
  process.exit(1);
}
