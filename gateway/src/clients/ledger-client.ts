import type { Client } from '@grpc/grpc-js';
import { createAsyncClient, type AsyncClient, type MeshTls } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';

export type LedgerClient = AsyncClient<ledgerV1.LedgerServiceServer> & { close(): void; raw: Client };

/** The promise client for the ledger; every call carries the request's CallContext as metadata. */
export function connectLedger(address: string, deadlineMs: number, tls: MeshTls): LedgerClient {
  return createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, { deadlineMs, mesh: { tls, server: 'ledger' } });
}
