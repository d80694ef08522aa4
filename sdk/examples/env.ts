// Shared by the examples: the client from the environment (WALLET_BASE_URL, WALLET_API_KEY).
import { WalletClient } from '@wallet/client';

export function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`Set ${name} (see sdk/examples/README.md).`);
    process.exit(2);
  }
  return value;
}

export function clientFromEnv(): WalletClient {
  return new WalletClient({
    baseUrl: required('WALLET_BASE_URL'),
    apiKey: required('WALLET_API_KEY'),
    timeoutMs: Number(process.env.WALLET_TIMEOUT_MS ?? 30_000),
    onRetry: (e) => console.warn(`retrying ${e.operationId} (${e.reason}) in ${e.delayMs} ms`),
  });
}

/** Centavos as pesos for people: 250000 → "$2.500,00". */
export const pesos = (cents: string | number | bigint) =>
  `$${(Number(cents) / 100).toLocaleString('es-CO', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
