import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { devMeshTls, startGrpcServer, type GrpcServerHandle } from '@wallet/platform';
import { eventually, freePort } from '@wallet/platform/testing';
import { startStack, type Stack } from './support/stack.js';

const GATEWAY_DIR = fileURLToPath(new URL('..', import.meta.url));

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());

describe('graceful shutdown', () => {
  it('finishes a request in flight, then refuses new connections and reports not-ready', async () => {
    const gw = await stack.extraGateway({});
    const port = new URL(gw.url).port;
    // A request whose body arrives slowly: it is in flight when stop() begins.
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/admin/companies',
          headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write('{"name": "Cierre Ordenado S.A.S.", ');
      setTimeout(() => {
        const stopping = gw.stop();
        setTimeout(() => {
          req.end('"nit": "900555444-3", "taxRegime": "SIMPLE"}');
          void stopping;
        }, 150);
      }, 150);
    });
    const done = await inFlight;
    expect(done.status).toBe(201);
    expect(JSON.parse(done.body).name).toBe('Cierre Ordenado S.A.S.');
    await gw.stop();
    await expect(fetch(`${gw.url}/openapi.json`)).rejects.toThrow();
    await expect(fetch(`${gw.opsUrl}/readyz`)).rejects.toThrow();
  });
});

describe('graceful shutdown of the real process (dist/main.js, SIGTERM)', () => {
  it('readiness fails first, the request in flight completes, then the process exits 0 within the grace period', async () => {
    const [port, opsPort] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${port}`;
    const opsUrl = `http://127.0.0.1:${opsPort}`;
    // Readiness only probes that each gRPC channel connects (over mutual TLS, to the identity it
    // expects), so the services this test does not use are empty gRPC servers holding their mesh
    // certificates: the process starts ready, and only the shutdown makes it not ready.
    const ledger = stack.ledger.address;
    const standIns: GrpcServerHandle[] = [];
    const standIn = async (identity: 'transfer' | 'pse-deposit' | 'collect-key' | 'receipt' | 'webhook') => {
      const s = await startGrpcServer('127.0.0.1', 0, [], devMeshTls(identity));
      standIns.push(s);
      return `127.0.0.1:${s.port}`;
    };
    const child = spawn(process.execPath, ['--experimental-async-context-frame', 'dist/main.js'], {
      cwd: GATEWAY_DIR,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        DATABASE_URL: stack.db.url,
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: String(port),
        GATEWAY_OPS_PORT: String(opsPort),
        GATEWAY_MIGRATE_ON_START: 'false',
        RATE_LIMIT_PREFIX: `rl:${stack.namespace}_child`,
        SHUTDOWN_GRACE_MS: '30000',
        LEDGER_GRPC_ADDR: ledger,
        TRANSFER_GRPC_ADDR: await standIn('transfer'),
        DEPOSIT_GRPC_ADDR: await standIn('pse-deposit'),
        COLLECT_KEY_GRPC_ADDR: await standIn('collect-key'),
        RECEIPT_GRPC_ADDR: await standIn('receipt'),
        WEBHOOK_GRPC_ADDR: await standIn('webhook'),
      },
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
    try {
      // A start is not a timing assertion: ~2 s alone, past 20 s beside the rest of the suite on 2 cores.
      await eventually(async () => (await fetch(`${opsUrl}/healthz`)).status === 200, 90_000, 100);
      const before = await eventually(
        async () => {
          const r = await fetch(`${opsUrl}/readyz`);
          return r.status === 200 ? (r.json() as Promise<{ checks: Record<string, string> }>) : undefined;
        },
        60_000,
        200,
      );
      expect(before.checks.shutdown).toBeUndefined();

      // A request in flight: its body is still arriving when SIGTERM comes.
      let firstChunkSent!: () => void;
      const sent = new Promise<void>((r) => {
        firstChunkSent = r;
      });
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/admin/companies',
        headers: {
          authorization: `Bearer ${stack.gw.adminToken}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
          'x-request-id': 'shutdown-inflight-1',
        },
      });
      const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
      });
      req.write('{"name": "Cierre Proceso S.A.S.", ', () => firstChunkSent());
      await sent;
      // The server has the request once its access log would show it in flight; readiness still ok.
      await new Promise((r) => setTimeout(r, 100));

      expect(child.kill('SIGTERM')).toBe(true);
      // Readiness turns 503 ("draining") while the request is still open.
      const during = await eventually(
        async () => {
          const r = await fetch(`${opsUrl}/readyz`);
          return r.status === 503 ? (r.json() as Promise<{ checks: Record<string, string> }>) : undefined;
        },
        20_000,
        50,
      );
      expect(during.checks.shutdown).toBe('draining');

      req.end('"nit": "900555777-1", "taxRegime": "SIMPLE"}');
      const done = await answered;
      expect(done.status).toBe(201);
      expect(JSON.parse(done.body).name).toBe('Cierre Proceso S.A.S.');

      // Exit code 0: every step finished (the forced exit after SHUTDOWN_GRACE_MS exits 1).
      expect(await exited).toEqual({ code: 0, signal: null });
      await expect(fetch(`${url}/openapi.json`)).rejects.toThrow();

      const lines = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const msgs = lines.map((l) => l.msg);
      expect(msgs).toContain('shutting down');
      expect(msgs.indexOf('stopped')).toBeGreaterThan(msgs.indexOf('shutting down'));
      // The access line of the request that finished during the shutdown carries its request id.
      expect(lines.find((l) => l.msg === 'request' && l.route === '/admin/companies')).toMatchObject({ requestId: 'shutdown-inflight-1', status: 201 });
      expect(stdout).not.toContain(stack.gw.adminToken);
    } catch (err) {
      // Diagnostics for a failure: what the child said.
      process.stderr.write(`gateway child stdout:\n${stdout}\nstderr:\n${stderr}\n`);
      throw err;
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await Promise.all(standIns.map((s) => s.stop(1000)));
    }
  }, 240_000);
});
