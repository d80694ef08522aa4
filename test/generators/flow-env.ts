// The contract between test/e2e/generated-clients.test.ts and each hand-written flow: what the test
// hands the flow's process (a provisioned company's WRITE key, the gateway's URL) and what the flow
// reports back. Copied beside each flow and its generated client, compiled with them, run as a
// separate Node process: the flows are integrator code, not test code.

export interface FlowEnv {
  /** The gateway's base URL (the flows that need one; hey-api takes it from the document's `servers`). */
  baseUrl: string;
  /** A WRITE key of the company the test provisioned and funded (WRITE includes READ). */
  apiKey: string;
  /** A Bre-B key the sandbox directory resolves. */
  keyValue: string;
  /** Gross centavos to send. */
  amount: number;
  /** Unique per run: idempotency keys, references and the collect key's externalId derive from it. */
  runId: string;
}

export interface FlowReport {
  availableBrebCents: string;
  quoteTotalCost: number;
  transferId: string;
  /** The transfer's status once final (COMPLETED or FAILED), or the last one seen. */
  finalStatus: string;
  /** Pages read from GET /wallets/transactions by following nextCursor. */
  pages: number;
  movementIds: string[];
  paygatewayUrl: string;
  collectKeyValue: string;
  /** The base URL the client used (for hey-api: the one the document's `servers` gave it). */
  baseUrlUsed: string;
}

export const FINAL_STATUSES: readonly string[] = ['COMPLETED', 'FAILED', 'EXPIRED', 'REVERSED'];
