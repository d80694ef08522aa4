import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { ledgerV1 } from '@wallet/proto';
import { createAsyncClient } from '../../src/index.js';
import { createTestDatabase, deleteNamespaceStreams, eventually, meshClient, testNamespace, type TestDatabase } from '../../src/testing/index.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const FIXTURE = fileURLToPath(new URL('../fixtures/shutdown-service.mjs', import.meta.url));
const PLATFORM_DIR = fileURLToPath(new URL('../..', import.meta.url));

/**
 * SIGTERM to a real service process (ServiceScope + onShutdown, from dist/): readiness fails first,
 * the gRPC call in flight completes, the outbox event it committed is published by the relay's final
 * flush, connections close and the process exits 0 before the grace period's forced exit.
 */
describe('graceful shutdown of a service process', () => {
  let tdb: TestDatabase;
  const baseNs = testNamespace();
  const namespaces: string[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase('shut');
  });
  afterAll(async () => {
    for (const ns of namespaces) await deleteNamespaceStreams(NATS_URL, ns);
    await tdb.drop();
  });

  // Also with the production OpenTelemetry SDK (`--import @wallet/platform/otel`) exporting to a
  // collector that is not there: the export fails quietly and the exit is still clean.
  it.each([
    ['without tracing', [] as string[], {} as Record<string, string>, 'ns1'],
    [
      'with the OTel SDK and an unreachable collector',
      ['--import', './dist/telemetry/register.js'],
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SERVICE_NAME: 'shutdown-fixture' },
      'ns2',
    ],
  ])(
    'SIGTERM %s: not ready, call in flight answered, committed event published, exit 0',
    async (_name, extraArgs, extraEnv, sub) => {
      const ns = `${baseNs}_${sub}`;
      const id = sub === 'ns1' ? 'a1b2c3d4-0000-4000-8000-000000000001' : 'a1b2c3d4-0000-4000-8000-000000000002';
      namespaces.push(ns);
      const child = spawn(process.execPath, ['--experimental-async-context-frame', ...extraArgs, FIXTURE], {
        cwd: PLATFORM_DIR,
        env: { PATH: process.env.PATH, DATABASE_URL: tdb.url, NATS_URL, BUS_NAMESPACE: ns, SHUTDOWN_GRACE_MS: '10000', ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => {
        stdout += c;
      });
      child.stderr.on('data', (c) => {
        stderr += c;
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      const lines = () =>
        stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      const admin = new pg.Client({ connectionString: tdb.url });
      let client: ReturnType<typeof createAsyncClient<ledgerV1.LedgerServiceServer>> | undefined;
      try {
        const started = await eventually(async () => lines().find((l) => l.msg === 'started'), 30_000, 50);
        const opsUrl = `http://127.0.0.1:${String(started.opsPort)}`;
        expect((await fetch(`${opsUrl}/readyz`)).status).toBe(200);
        client = meshClient<ledgerV1.LedgerServiceServer>(ledgerV1.LedgerServiceClient, `127.0.0.1:${String(started.grpcPort)}`, 'gateway', 'ledger', 20_000);

        const call = client.getMovement({ id: id }, { requestId: 'shutdown-call-1', companyId: 'co-shutdown' });
        // The call is in the handler (it logs with the caller's ids) …
        const handling = await eventually(async () => lines().find((l) => l.msg === 'handling'), 10_000, 20);
        expect(handling).toMatchObject({ requestId: 'shutdown-call-1', companyId: 'co-shutdown' });

        // … when SIGTERM arrives: readiness fails while the call is still open.
        expect(child.kill('SIGTERM')).toBe(true);
        const during = await eventually(
          async () => {
            const r = await fetch(`${opsUrl}/readyz`);
            return r.status === 503 ? (r.json() as Promise<{ checks: Record<string, string> }>) : undefined;
          },
          5_000,
          50,
        );
        expect(during.checks.shutdown).toBe('draining');

        // Let the handler finish: it commits an event and answers.
        await admin.connect();
        await admin.query('insert into shutdown_fixture.release (id) values ($1)', [id]);
        await expect(call).resolves.toMatchObject({ id: id });

        expect(await exited).toEqual({ code: 0, signal: null });
        const msgs = lines().map((l) => l.msg);
        expect(msgs.indexOf('stopped')).toBeGreaterThan(msgs.indexOf('shutting down'));

        // The relay only polls every 10 minutes: the event went out with the shutdown's flush.
        const { rows } = await admin.query<{ n: string }>('select count(*)::text as n from shutdown_fixture.outbox where published_at is null');
        expect(rows[0]!.n).toBe('0');
        const nc = await connect({ servers: NATS_URL });
        try {
          const jsm = await jetstreamManager(nc);
          const m = await jsm.streams.getMessage(`${ns.toUpperCase()}_LEDGER`, { last_by_subj: `${ns}.ledger.credited` });
          expect(m?.header.get('ce-id')).toBe(id);
        } finally {
          await nc.close();
        }
      } catch (err) {
        process.stderr.write(`service child stdout:\n${stdout}\nstderr:\n${stderr}\n`);
        throw err;
      } finally {
        client?.close();
        await admin.end().catch(() => undefined);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      }
    },
    60_000,
  );
});
