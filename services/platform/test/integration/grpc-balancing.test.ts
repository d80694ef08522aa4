import { ledgerV1 } from '@wallet/proto';
import { AppError, asyncService, createLogger, devMeshTls, grpcTarget, startGrpcServer, type GrpcServerHandle, type MeshIdentity } from '../../src/index.js';
import { meshClient, openPolicy } from '../../src/testing/index.js';

/**
 * Replicas: one client over a target naming two servers (as the fault suite and a headless
 * Service give it) spreads its calls over both (round robin), keeps calling when one is gone, and
 * still checks every server's mesh identity (URI SAN) whatever address it dialled.
 */
describe('gRPC client over several addresses', () => {
  const log = createLogger('grpc-balancing-test', 'silent');

  async function server(name: string, identity: MeshIdentity = 'ledger'): Promise<{ handle: GrpcServerHandle; calls: string[] }> {
    const calls: string[] = [];
    const unimplemented = async () => {
      throw new AppError('INTERNAL_ERROR');
    };
    const impl = new Proxy(
      {
        getMovement: async (req: ledgerV1.GetMovementRequest) => {
          calls.push(req.id);
          return ledgerV1.Movement.fromPartial({ id: `${name}:${req.id}`, rail: ledgerV1.Rail.BREB });
        },
      },
      {
        get: (t, p) => (p in t ? (t as Record<string | symbol, unknown>)[p] : unimplemented),
        ownKeys: () => Object.keys(ledgerV1.LedgerServiceService),
        getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
      },
    );
    const handle = await startGrpcServer(
      '127.0.0.1',
      0,
      [
        {
          definition: ledgerV1.LedgerServiceService,
          implementation: asyncService<ledgerV1.LedgerServiceServer>(
            impl as never,
            log,
            openPolicy(ledgerV1.LedgerServiceService, ['gateway']) as never,
            devMeshTls(identity),
          ),
        },
      ],
      devMeshTls(identity),
    );
    return { handle, calls };
  }
  const ask = (client: ReturnType<typeof meshClient<ledgerV1.LedgerServiceServer>>, id: string) =>
    client.getMovement({ id }, { requestId: `rr-${id}`, companyId: 'co-1' });

  it('spreads calls over both servers, and keeps working when one of them is gone', async () => {
    const a = await server('a');
    const b = await server('b');
    const client = meshClient<ledgerV1.LedgerServiceServer>(
      ledgerV1.LedgerServiceClient,
      `127.0.0.1:${a.handle.port},127.0.0.1:${b.handle.port}`,
      'gateway',
      'ledger',
      3000,
    );
    try {
      // Sequential calls: round robin alternates over the READY connections (the first calls may
      // all go to the first one ready while the other still connects).
      const answered: string[] = [];
      for (let i = 0; i < 40; i++) answered.push((await ask(client, `x${i}`)).id.split(':')[0]!);
      expect(a.calls.length).toBeGreaterThan(5);
      expect(b.calls.length).toBeGreaterThan(5);
      expect(a.calls.length + b.calls.length).toBe(40);
      expect(answered.filter((s) => s === 'a').length).toBe(a.calls.length);

      await a.handle.stop(100);
      const before = b.calls.length;
      for (let i = 0; i < 20; i++) expect((await ask(client, `y${i}`)).id).toBe(`b:y${i}`);
      expect(b.calls.length - before).toBe(20);
    } finally {
      client.close();
      await a.handle.stop(100);
      await b.handle.stop(100);
    }
  });

  it("checks each server's mesh identity: an address held by another service gets no call", async () => {
    const ledger = await server('ledger');
    const impostor = await server('impostor', 'transfer');
    const client = meshClient<ledgerV1.LedgerServiceServer>(
      ledgerV1.LedgerServiceClient,
      `127.0.0.1:${impostor.handle.port},127.0.0.1:${ledger.handle.port}`,
      'gateway',
      'ledger',
      3000,
    );
    try {
      for (let i = 0; i < 10; i++) expect((await ask(client, `z${i}`)).id).toBe(`ledger:z${i}`);
      expect(impostor.calls).toEqual([]);
    } finally {
      client.close();
      await ledger.handle.stop(100);
      await impostor.handle.stop(100);
    }
  });

  it('one address is still one DNS target; several IP addresses become an ipv4/ipv6 target; names are refused with a reason', () => {
    expect(grpcTarget('127.0.0.1:50051')).toBe('127.0.0.1:50051');
    expect(grpcTarget('ledger:50051')).toBe('ledger:50051');
    expect(grpcTarget('dns:///ledger-headless.wallet.svc:50051')).toBe('dns:///ledger-headless.wallet.svc:50051');
    expect(grpcTarget('127.0.0.1:1001, 127.0.0.1:1002')).toBe('ipv4:127.0.0.1:1001,127.0.0.1:1002');
    expect(grpcTarget('[::1]:1001,[::1]:1002')).toBe('ipv6:[::1]:1001,[::1]:1002');
    expect(grpcTarget('ipv4:10.0.0.1:1,10.0.0.2:1')).toBe('ipv4:10.0.0.1:1,10.0.0.2:1');
    expect(() => grpcTarget('ledger-0:50051,ledger-1:50051')).toThrow(/IPv4|dns:\/\/\//);
    expect(() => grpcTarget('127.0.0.1:1,[::1]:2')).toThrow(/one|all/);
  });
});
