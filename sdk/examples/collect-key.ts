// A collect key: a Bre-B alias (`@…`) for one of your customers, and its QR to pay it.
//   WALLET_BASE_URL=… WALLET_API_KEY=wk_test_… node examples/collect-key.ts
// Optional: CUSTOMER_ID (your id of the customer, default cliente-<time>), QR_PATH (default ./qr-<key>.png).
import { writeFile } from 'node:fs/promises';
import { WalletApiError } from '@wallet/client';
import { clientFromEnv } from './env.ts';

const wallet = clientFromEnv();
const externalId = process.env.CUSTOMER_ID ?? `cliente-${Date.now()}`;

try {
  const key = await wallet.collectKeys.create({ externalId, name: 'Cliente de ejemplo' });
  console.log(`Collect key ${key.key.value} (${key.id}) for ${externalId}: ${key.state}`);

  const { qr } = await wallet.collectKeys.issueQr(key.id);
  console.log(`QR ${qr.id} (${qr.type}), reference ${qr.reference}`);
  const png = await wallet.collectKeys.qrPng(qr.id);
  const path = process.env.QR_PATH ?? `qr-${key.key.value.replace('@', '')}.png`;
  await writeFile(path, png);
  console.log(`QR image: ${path} (${png.byteLength} bytes)`);

  let count = 0;
  for await (const k of wallet.collectKeys.list({ externalId })) {
    console.log(`  listed ${k.key.value} ${k.state}`);
    count++;
  }
  console.log(`${count} key(s) for ${externalId}`);
} catch (err) {
  if (err instanceof WalletApiError) console.error(`API refused: ${err.status} ${err.error}: ${err.message}`);
  else console.error(err);
  process.exit(1);
}
