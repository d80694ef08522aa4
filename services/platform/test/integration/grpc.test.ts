import { ledgerV1 } from '@wallet/proto';
import {
  AppError,
  asyncService,
  createAsyncClient,
  createLogger,
  devMeshTls,
  startGrpcServer,
  type CallContext,
  type GrpcServerHandle,
} from '../../src/index.js';
import { meshClient, openPolicy } from '../../src/testing/index.js';

describe('gRPC helpers over a real server', () => {
  const log = createLogger('grpc-test', 'silent');
  let server: GrpcServerHandle;
  let client: ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>;
  const seen: CallContext[] = [];

  beforeAll(async () => {
    const unimplemented = async () => {
      throw new AppError('INTERNAL_ERROR');
    };
    const impl = new Proxy(
      {
        getMovement: async (req: ledgerV1.GetMovementRequest, ctx: CallContext) => {
          seen.push(ctx);
          if (req.id === 'missing') throw new AppError('TRANSACTION_NOT_FOUND');
          if (req.id === 'crash') throw new Error('select * from ledger.movements failed on db-host-7');
          if (req.id === 'slow') await new Promise((r) => setTimeout(r, 500));
          return ledgerV1.Movement.fromPartial({ id: req.id, amount: 2n ** 62n, rail: ledgerV1.Rail.BREB });
        },
      },
      {
        get: (t, p) => (p in t ? (t as Record<string | symbol, unknown>)[p] : unimplemented),
        ownKeys: () => Object.keys(ledgerV1.LedgerServiceService),
        getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
      },
    );
    server = await startGrpcServer(
      '127.0.0.1',
      0,
      [
        {
          definition: ledgerV1.LedgerServiceService,
          implementation: asyncService<ledgerV1.LedgerServiceServer>(
            impl as never,
            log,
            openPolicy(ledgerV1.LedgerServiceService, ['gateway', 'gateway:admin']) as never,
            devMeshTls('ledger'),
          ),
        },
      ],
      devMeshTls('ledger'),
    );
    client = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, `127.0.0.1:${server.port}`, 'gateway', 'ledger', 2000);
  });

  afterAll(async () => {
    client.close();
    await server.stop(1000);
  });

  it('carries the call context as metadata and int64 as bigint', async () => {
    const m = await client.getMovement({ id: 'abc' }, { requestId: 'req-1', companyId: 'c-1', apiKeyId: 'k-1', actor: 'apikey:k-1' });
    expect(m.id).toBe('abc');
    expect(m.amount).toBe(2n ** 62n);
    expect(m.rail).toBe(ledgerV1.Rail.BREB);
    expect(seen.at(-1)).toMatchObject({
      requestId: 'req-1',
      companyId: 'c-1',
      apiKeyId: 'k-1',
      actor: 'apikey:k-1',
      caller: 'gateway',
      principal: { kind: 'apikey', companyId: 'c-1', keyId: 'k-1' },
    });
  });

  it('maps catalogue errors and hides internal ones', async () => {
    await expect(client.getMovement({ id: 'missing' }, { requestId: 'r' })).rejects.toMatchObject({ code: 'TRANSACTION_NOT_FOUND' });
    const err = await client.getMovement({ id: 'crash' }, { requestId: 'r' }).catch((e: AppError) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INTERNAL_ERROR');
    expect((err as AppError).message).not.toMatch(/select|db-host/);
  });

  it('enforces the deadline', async () => {
    await expect(client.getMovement({ id: 'slow' }, { requestId: 'r' }, { deadlineMs: 100 })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
