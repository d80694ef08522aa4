import type { Client } from '@grpc/grpc-js';
import { createAsyncClient, type AsyncClient, type MeshTls } from '@wallet/platform';
import { depositV1 } from '@wallet/proto';

export type DepositClient = AsyncClient<depositV1.DepositServiceServer> & { close(): void; raw: Client };

/** The promise client for the pse-deposit service; every call carries the request's CallContext. */
export function connectDeposit(address: string, deadlineMs: number, tls: MeshTls): DepositClient {
  return createAsyncClient<depositV1.DepositServiceServer>(depositV1.DepositServiceClient, address, { deadlineMs, mesh: { tls, server: 'pse-deposit' } });
}
