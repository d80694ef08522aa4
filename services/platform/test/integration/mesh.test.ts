import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { ledgerV1 } from '@wallet/proto';
import {
  AppError,
  CALLER_CONTEXT_METADATA,
  CallerContextSigner,
  asyncService,
  createAsyncClient,
  createLogger,
  devMeshTls,
  meshChannelCredentials,
  devCallerContextKeyFiles,
  ensureDevPki,
  loadMeshTls,
  meshTlsFromEnv,
  metricsRegistry,
  startGrpcServer,
  type CallContext,
  type GrpcServerHandle,
} from '../../src/index.js';
import { meshClient, TEST_COMPANY_PROFILE } from '../../src/testing/index.js';
import { generateKeyPairSync } from 'node:crypto';
import { TLSSocket } from 'node:tls';
import { jest } from '@jest/globals';
import { SignJWT } from 'jose';

/**
 * The mesh as an attacker meets it: a real gRPC server over mutual TLS, called without a
 * certificate, with one of another CA, with a mesh identity the method does not allow, and by a
 * client that reached the wrong server. Only the allowed identity reaches the handler.
 */
describe('mesh: mutual TLS and per-method allow-lists', () => {
  const log = createLogger('mesh-test', 'silent');
  let server: GrpcServerHandle;
  let address: string;
  const handled: CallContext[] = [];
  let foreignRoot: string;

  beforeAll(async () => {
    const unimplemented = async () => {
      throw new AppError('INTERNAL_ERROR');
    };
    const impl = new Proxy(
      {
        getMovement: async (req: ledgerV1.GetMovementRequest, ctx: CallContext) => {
          handled.push(ctx);
          return ledgerV1.Movement.fromPartial({ id: req.id, rail: ledgerV1.Rail.BREB });
        },
      },
      {
        get: (t, p) => (p in t ? (t as Record<string | symbol, unknown>)[p] : unimplemented),
        ownKeys: () => Object.keys(ledgerV1.LedgerServiceService),
        getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
      },
    );
    const policy = Object.fromEntries(
      Object.keys(ledgerV1.LedgerServiceService).map((k) => [k, k === 'getMovement' ? ['gateway'] : k === 'credit' ? ['gateway:admin'] : ['transfer']]),
    );
    server = await startGrpcServer(
      '127.0.0.1',
      0,
      [
        {
          definition: ledgerV1.LedgerServiceService,
          implementation: asyncService<ledgerV1.LedgerServiceServer>(impl as never, log, policy as never, devMeshTls('ledger')),
        },
      ],
      devMeshTls('ledger'),
    );
    address = `127.0.0.1:${server.port}`;
    foreignRoot = mkdtempSync(join(tmpdir(), 'foreign-pki-'));
  });

  afterAll(async () => {
    await server.stop(1000);
    rmSync(foreignRoot, { recursive: true, force: true });
  });

  const ask = (client: ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>>, id: string) =>
    client.getMovement({ id }, { requestId: `mesh-${id}`, companyId: 'co-1' }).then(
      () => 'OK',
      (e: AppError) => e.code,
    );

  it('serves the identity the method allows, and tells the handler who called', async () => {
    const client = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, 'gateway', 'ledger', 5000);
    expect(await ask(client, 'ok')).toBe('OK');
    expect(handled.at(-1)).toMatchObject({ requestId: 'mesh-ok', caller: 'gateway' });
    client.close();
  });

  it('reads a connection’s client certificate once, and keeps each connection’s own identity', async () => {
    const reads = jest.spyOn(TLSSocket.prototype, 'getPeerCertificate');
    try {
      const gw = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, 'gateway', 'ledger', 5000);
      const other = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, 'transfer', 'ledger', 5000);
      expect(await ask(gw, 'once-0')).toBe('OK');
      expect(await ask(other, 'once-x')).toBe('CALLER_NOT_ALLOWED');
      const afterFirst = reads.mock.calls.length;
      for (let i = 1; i <= 5; i++) {
        expect(await ask(gw, `once-${i}`)).toBe('OK');
        expect(await ask(other, `once-x${i}`)).toBe('CALLER_NOT_ALLOWED');
      }
      expect(handled.at(-1)).toMatchObject({ requestId: 'mesh-once-5', caller: 'gateway' });
      // Ten more calls on the same two connections: no certificate read (TLS 1.3 between our processes).
      expect(reads.mock.calls.length).toBe(afterFirst);
      gw.close();
      other.close();
    } finally {
      reads.mockRestore();
    }
  });

  it('refuses a mesh identity the method does not allow, before the handler', async () => {
    const before = handled.length;
    const client = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, 'webhook', 'ledger', 5000);
    expect(await ask(client, 'webhook')).toBe('CALLER_NOT_ALLOWED');
    // transfer may call other methods, not this one
    const t = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, 'transfer', 'ledger', 5000);
    expect(await ask(t, 'transfer')).toBe('CALLER_NOT_ALLOWED');
    expect(handled.length).toBe(before);
    const metric = (await metricsRegistry.getSingleMetric('grpc_server_calls_refused_total')!.get()).values;
    expect(metric).toEqual(expect.arrayContaining([expect.objectContaining({ labels: { method: 'getMovement', caller: 'webhook', reason: 'not_allowed' } })]));
    client.close();
    t.close();
  });

  it('refuses a plaintext caller and a TLS caller without a client certificate', async () => {
    const before = handled.length;
    const call = (creds: ReturnType<typeof credentials.createInsecure>) =>
      new Promise<number>((resolve) => {
        const c = new ledgerV1.LedgerServiceClient(address, creds);
        const md = new Metadata();
        md.set('x-company-id', 'co-1');
        c.getMovement({ id: 'raw' }, md, { deadline: new Date(Date.now() + 3000) }, (err) => {
          c.close();
          resolve(err?.code ?? 0);
        });
      });
    expect(await call(credentials.createInsecure())).not.toBe(0);
    const ca = devMeshTls('gateway').ca;
    expect(await call(credentials.createSsl(ca, null, null, { checkServerIdentity: () => undefined }))).not.toBe(0);
    expect(handled.length).toBe(before);
  });

  it('refuses a certificate of another CA, even one that names an allowed identity', async () => {
    const before = handled.length;
    const forged = loadMeshTls(join(ensureDevPki(join(foreignRoot, 'v1'), ['gateway']), 'gateway'), 'gateway');
    const ours = devMeshTls('gateway');
    // the forger trusts our CA (to reach the server) but presents its own CA's 'gateway' certificate
    const client = createAsyncClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, {
      deadlineMs: 3000,
      mesh: { tls: { ...forged, ca: ours.ca }, server: 'ledger' },
    });
    expect(await ask(client, 'forged')).toBe('SERVICE_UNAVAILABLE');
    expect(handled.length).toBe(before);
    client.close();
  });

  it('a client refuses a server that is not the identity it meant', async () => {
    const before = handled.length;
    const client = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, 'gateway', 'transfer', 3000);
    expect(await ask(client, 'wrong-server')).toBe('SERVICE_UNAVAILABLE');
    expect(handled.length).toBe(before);
    client.close();
  });

  /** A raw call as the gateway (its real mesh certificate) with the caller-context metadata an attacker chooses. */
  const rawAsGateway = (method: 'getMovement' | 'credit', token: string | undefined, companyHeader = 'co-victim') =>
    new Promise<string>((resolve) => {
      const c = new ledgerV1.LedgerServiceClient(address, meshChannelCredentials({ tls: devMeshTls('gateway'), server: 'ledger' }));
      const md = new Metadata();
      md.set('x-request-id', `raw-${method}`);
      md.set('x-company-id', companyHeader);
      if (token !== undefined) md.set(CALLER_CONTEXT_METADATA, token);
      const req =
        method === 'getMovement'
          ? ledgerV1.GetMovementRequest.fromPartial({ id: 'x' })
          : ledgerV1.CreditRequest.fromPartial({ idempotencyKey: 'k', amountCents: 1n });
      (c[method] as (r: unknown, m: Metadata, o: object, cb: (e: { metadata?: Metadata } | null) => void) => void)(
        req,
        md,
        { deadline: new Date(Date.now() + 3000) },
        (err) => {
          c.close();
          resolve(err ? String(err.metadata?.get('x-error-code')[0] ?? 'transport') : 'OK');
        },
      );
    });
  const apikey = (companyId: string) => ({ kind: 'apikey' as const, companyId, keyId: 'k1', scope: 'WRITE' as const, profile: TEST_COMPANY_PROFILE });

  it('takes the company only from the signed caller context, never from x-company-id', async () => {
    const gw = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, address, 'gateway', 'ledger', 5000);
    expect(await gw.getMovement({ id: 'mine' }, { requestId: 'own', companyId: 'co-victim', principal: apikey('co-attacker') }).then(() => 'OK')).toBe('OK');
    expect(handled.at(-1)).toMatchObject({ requestId: 'own', companyId: 'co-attacker', principal: { kind: 'apikey', companyId: 'co-attacker' } });
    gw.close();
    const signed = await new CallerContextSigner(devMeshTls('gateway').callerSigningKey!).sign(apikey('co-attacker'));
    expect(await rawAsGateway('getMovement', signed, 'co-victim')).toBe('OK');
    expect(handled.at(-1)!.companyId).toBe('co-attacker');
  });

  it('refuses a gateway call without a caller context, with a forged or expired one, and a company principal on an operator method', async () => {
    const before = handled.length;
    expect(await rawAsGateway('getMovement', undefined)).toBe('CALLER_NOT_AUTHENTICATED');
    expect(await rawAsGateway('getMovement', 'not-a-jwt')).toBe('CALLER_NOT_AUTHENTICATED');
    // signed with another key (an attacker's own Ed25519 key), otherwise perfect
    const { privateKey } = generateKeyPairSync('ed25519');
    expect(await rawAsGateway('getMovement', await new CallerContextSigner(privateKey).sign(apikey('co-victim')))).toBe('CALLER_NOT_AUTHENTICATED');
    // the real key, expired (its 30 s of clock tolerance passed)
    const real = devMeshTls('gateway').callerSigningKey!;
    const expired = await new SignJWT({ k: 'apikey', co: 'co-victim', key: 'k1', scope: 'WRITE', p: ['1', 'n', false, 0, '0', '0'] })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'wallet-caller+jwt' })
      .setIssuer('wallet-gateway')
      .setAudience('wallet-services')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 300)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(real);
    expect(await rawAsGateway('getMovement', expired)).toBe('CALLER_NOT_AUTHENTICATED');
    // a valid company principal may not call an operator's method
    expect(await rawAsGateway('credit', await new CallerContextSigner(real).sign(apikey('co-victim')))).toBe('CALLER_NOT_ALLOWED');
    expect(handled.length).toBe(before);
  });

  it('production requires MESH_TLS_DIR and refuses the development CA; development falls back to it', () => {
    expect(() => meshTlsFromEnv('ledger', { NODE_ENV: 'production' })).toThrow('MESH_TLS_DIR is required in production');
    const devDir = join(ensureDevPki(), 'ledger');
    expect(() => meshTlsFromEnv('ledger', { NODE_ENV: 'production', MESH_TLS_DIR: devDir })).toThrow('CALLER_CONTEXT_PUBLIC_KEY_FILE is required');
    const keys = devCallerContextKeyFiles(ensureDevPki());
    expect(() => meshTlsFromEnv('ledger', { NODE_ENV: 'production', MESH_TLS_DIR: devDir, CALLER_CONTEXT_PUBLIC_KEY_FILE: keys.publicKeyFile })).toThrow(
      'development CA, refused in production',
    );
    expect(() =>
      meshTlsFromEnv('gateway', { NODE_ENV: 'development', MESH_TLS_DIR: join(ensureDevPki(), 'gateway'), CALLER_CONTEXT_PUBLIC_KEY_FILE: keys.publicKeyFile }),
    ).toThrow('CALLER_CONTEXT_PRIVATE_KEY_FILE is required');
    expect(meshTlsFromEnv('ledger', { NODE_ENV: 'development', MESH_TLS_DIR: devDir, CALLER_CONTEXT_PUBLIC_KEY_FILE: keys.publicKeyFile }).identity).toBe(
      'ledger',
    );
    expect(meshTlsFromEnv('ledger', { NODE_ENV: 'development' }).identity).toBe('ledger');
  });

  it('a process refuses, at start-up, a certificate that is not its own identity', () => {
    expect(() => loadMeshTls(join(ensureDevPki(), 'gateway'), 'ledger')).toThrow('mesh certificate names gateway, not ledger');
  });
});
