import type { Client } from '@grpc/grpc-js';
import { createAsyncClient, type AsyncClient, type MeshTls } from '@wallet/platform';
import { receiptV1 } from '@wallet/proto';

export type ReceiptClient = AsyncClient<receiptV1.ReceiptServiceServer> & { close(): void; raw: Client };

/** The promise client for the receipt service; every call carries the request's CallContext. */
export function connectReceipt(address: string, deadlineMs: number, tls: MeshTls): ReceiptClient {
  return createAsyncClient<receiptV1.ReceiptServiceServer>(receiptV1.ReceiptServiceClient, address, { deadlineMs, mesh: { tls, server: 'receipt' } });
}
