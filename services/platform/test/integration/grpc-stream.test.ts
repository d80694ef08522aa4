import { settlementsV1, transferV1 } from '@wallet/proto';
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

/**
 * Server-streaming RPCs through asyncService and createAsyncClient (the reconciliation's
 * ListSettlements): the allow-list applies as to unary calls, the handler's async iterable is
 * written only as fast as the client reads (back-pressure), it is closed when the client stops
 * early, and an error after some messages reaches the client as its catalogue code.
 */
describe('gRPC server streams over the mesh', () => {
  const log = createLogger('stream-test', 'silent');
  let server: GrpcServerHandle;
  let address: string;
  const state = { produced: 0, closed: 0 };
  /** Resolvers waiting for the handler's iterable to be closed (its finally block ran). */
  const onClose: Array<() => void> = [];
  const nextClose = () => new Promise<void>((resolve) => onClose.push(resolve));

  const batch = (i: number): settlementsV1.SettlementBatch => ({
    records: Array.from({ length: 500 }, (_, j) => ({
      ourId: `id-${String(i).padStart(6, '0')}-${j}`,
      status: 'COMPLETED',
      direction: 'OUT',
      amountCents: BigInt(j + 1),
      companyId: 'co-1',
      settledAt: '2025-03-14T05:00:00.000Z',
      valueDate: '2025-03-14',
    })),
  });

  beforeAll(async () => {
    const unimplemented = async () => {
      throw new AppError('INTERNAL_ERROR');
    };
    const impl = new Proxy(
      {
        async *listSettlements(req: settlementsV1.ListSettlementsRequest, _ctx: CallContext) {
          try {
            for (let i = 0; i < 2_000; i++) {
              if (req.rail === 'fail' && i === 3) throw new AppError('INVALID_REQUEST', 'broken after three');
              state.produced++;
              yield batch(i);
              if (req.rail === 'short' && i === 4) return;
            }
          } finally {
            state.closed++;
            for (const resolve of onClose.splice(0)) resolve();
          }
        },
      },
      {
        get: (t, p) => (p in t ? (t as Record<string | symbol, unknown>)[p] : unimplemented),
        ownKeys: () => Object.keys(transferV1.TransferServiceService),
        getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
      },
    );
    const policy = Object.fromEntries(Object.keys(transferV1.TransferServiceService).map((k) => [k, ['reconciliation']]));
    server = await startGrpcServer(
      '127.0.0.1',
      0,
      [
        {
          definition: transferV1.TransferServiceService,
          implementation: asyncService<transferV1.TransferServiceServer>(impl as never, log, policy as never, devMeshTls('transfer')),
        },
      ],
      devMeshTls('transfer'),
    );
    address = `127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await server.stop(1000);
  });

  const client = (as: 'reconciliation' | 'gateway' | 'ops') =>
    createAsyncClient<transferV1.TransferServiceServer>(transferV1.TransferServiceClient, address, { mesh: { tls: devMeshTls(as), server: 'transfer' } });

  it('streams every message in order and ends', async () => {
    const c = client('reconciliation');
    const got: string[] = [];
    for await (const b of c.listSettlements({ rail: 'short', date: '', batchSize: 0 }, { requestId: 'r1' })) got.push(b.records[0]!.ourId);
    expect(got).toEqual([0, 1, 2, 3, 4].map((i) => `id-${String(i).padStart(6, '0')}-0`));
    c.close();
  });

  it("writes only as fast as the client reads, and closes the handler's iterable when the client stops early", async () => {
    const c = client('reconciliation');
    state.produced = 0;
    const closedBefore = state.closed;
    const closed = nextClose();
    let read = 0;
    for await (const b of c.listSettlements({ rail: 'slow', date: '', batchSize: 0 }, { requestId: 'r2' })) {
      expect(b.records).toHaveLength(500);
      read++;
      if (read === 3) await new Promise((r) => setTimeout(r, 500)); // a slow consumer
      if (read === 5) break;
    }
    // ~35 KB a batch: the transport's windows and buffers hold a few, never the 2,000.
    expect(state.produced).toBeLessThan(100);
    // The handler's iterable is closed once the cancellation reaches the server (a hang here fails by the test's time-out).
    await closed;
    expect(state.closed).toBe(closedBefore + 1);
    c.close();
  });

  it('an error after some messages reaches the client as its catalogue code', async () => {
    const c = client('reconciliation');
    let read = 0;
    const drain = async () => {
      for await (const _ of c.listSettlements({ rail: 'fail', date: '', batchSize: 0 }, { requestId: 'r3' })) read++;
    };
    await expect(drain()).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(read).toBe(3);
    c.close();
  });

  it('refuses an identity the method does not allow, before the handler', async () => {
    const produced = state.produced;
    for (const as of ['gateway', 'ops'] as const) {
      const c = client(as);
      const drain = async () => {
        for await (const _ of c.listSettlements({ rail: 'short', date: '', batchSize: 0 }, { requestId: 'r4' })) {
          /* none */
        }
      };
      await expect(drain()).rejects.toMatchObject({ code: 'CALLER_NOT_ALLOWED' });
      c.close();
    }
    expect(state.produced).toBe(produced);
  });
});
