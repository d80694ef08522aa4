import type { Client } from '@grpc/grpc-js';
import { createAsyncClient, type AsyncClient, type MeshTls } from '@wallet/platform';
import { transferV1 } from '@wallet/proto';

export type TransferClient = AsyncClient<transferV1.TransferServiceServer> & { close(): void; raw: Client };

/** The promise client for the transfer service; every call carries the request's CallContext. */
export function connectTransfer(address: string, deadlineMs: number, tls: MeshTls): TransferClient {
  return createAsyncClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, address, { deadlineMs, mesh: { tls, server: 'transfer' } });
}
