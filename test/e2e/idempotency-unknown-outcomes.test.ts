import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { startGateway, type StartedGateway } from '@wallet/gateway/testing';
import { startTransfer, type StartedTransfer } from '@wallet/transfer/testing';
import { eventually } from '@wallet/platform/testing';
import { fetchDocumented } from '../support/openapi-check.js';
import { NATS_URL, REDIS_URL, freePort, startStack } from '../support/stack.js';
import { SANDBOX_ACH_ACCOUNT } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Unknown outcomes at the edge (docs/decisions.md "`Idempotency-Key` on a send: unknown outcomes"): a send whose outcome the client cannot know (the
 * gateway's deadline passed after the transfer service accepted it; the gateway died mid-request)
 * is retried with the same `Idempotency-Key`, and the retry answers THAT transfer in its current
 * state: never a second transfer, never a second reserve. Through the real HTTP and gRPC layers:
 * a loopback TCP proxy sits between a gateway and a transfer service and can hold back the
 * service's replies; the second case kills a real gateway process with SIGKILL.
 */

/**
 * A TCP proxy on loopback in front of `target`. Requests always go through; while `hold()` is on,
 * the replies (every byte from the target) are kept back, per connection, until `release()`.
 * The gRPC traffic is TLS end to end (the mesh): the proxy only moves bytes.
 */
async function replyHoldingProxy(target: string) {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let holding = false;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket; held: Buffer[] }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    const pair = { client, upstream, held: [] as Buffer[] };
    pairs.add(pair);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (holding) pair.held.push(chunk);
      else client.write(chunk);
    });
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const p of pairs) for (const chunk of p.held.splice(0)) p.client.write(chunk);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const p of pairs) {
          p.client.destroy();
          p.upstream.destroy();
        }
        server.close(() => r());
      }),
  };
}

const achBody = (amount: number) => ({
  amount,
  destination: {
    bankAccount: { ...SANDBOX_ACH_ACCOUNT },
  },
  description: 'Pago proveedor',
});

describe('Idempotency-Key: a send whose outcome is unknown is answered, never paid twice', () => {
  let stack: Stack;
  let transfer: StartedTransfer;
  let db: pg.Client;
  /** The Node flags every service process runs with (deploy/local/processes.mjs, as test/faults/run.mjs uses them). */
  let nodeFlags: string[];

  beforeAll(async () => {
    ({ NODE_FLAGS: nodeFlags } = (await import(join(process.cwd(), '..', 'deploy', 'local', 'processes.mjs'))) as { NODE_FLAGS: string[] });
    stack = await startStack({ transfers: true });
    // A transfer service of our own (a replica of the stack's, same database, bus, ledger and
    // sandbox) whose address we know, to put the proxy in front of.
    transfer = await startTransfer({
      databaseUrl: stack.databaseUrl,
      natsUrl: NATS_URL,
      namespace: stack.namespace,
      ledgerAddress: stack.ledger.address,
      providerUrl: stack.sandbox!.url,
      callbackBaseUrl: `${stack.gateway.url}/webhooks/rails`,
      port: 0,
      logLevel: 'silent',
    });
    db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await transfer?.stop();
    await stack?.stop();
  });
  afterEach(async () => {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
  });

  async function company(name: string) {
    const co = await stack.provision(name, { taxRegime: 'SIMPLE' });
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 })).status).toBe(200);
    expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/ACH/credit`, { amountCents: 1_000_000, reference: 'seed' })).status).toBe(201);
    return co;
  }

  /** A request to one of this file's gateways; the answer is checked against the document that gateway serves. */
  async function call(baseUrl: string, method: string, path: string, o: { token: string; body?: unknown; headers?: Record<string, string> }) {
    const res = await fetchDocumented(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.token}`, ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }
  const send = (baseUrl: string, token: string, body: unknown, key: string) =>
    call(baseUrl, 'POST', '/transfers/send', { token, body, headers: { 'Idempotency-Key': key } });
  /** Opens the gateway's gRPC connection to the transfer service (through the proxy) while nothing is held. */
  const warmUp = async (baseUrl: string, token: string) => {
    expect((await call(baseUrl, 'POST', '/transfers/quote/ach', { token, body: { amount: 1_000 } })).status).toBe(200);
  };

  const count = async (sql: string, params: unknown[]) => Number((await db.query<{ n: number }>(sql, params)).rows[0]!.n);
  const transfersOf = (companyId: string) => count('select count(*)::int as n from transfer.transfers where company_id = $1', [companyId]);
  const reservesOf = (companyId: string) => count(`select count(*)::int as n from ledger.postings where company_id = $1 and kind = 'reserve'`, [companyId]);
  /** The transfer the key made, once the transfer service has accepted it (reserved: past RECEIVED). */
  const acceptedUnder = (companyId: string, key: string) =>
    eventually(
      async () => {
        const { rows } = await db.query<{ id: string; state: string }>(
          'select id::text as id, state from transfer.transfers where company_id = $1 and idempotency_key = $2',
          [companyId, key],
        );
        return rows[0] && !['RECEIVED', 'ABANDONING'].includes(rows[0].state) ? rows[0] : undefined;
      },
      15_000,
      50,
    );
  const claimOf = async (companyId: string, key: string) =>
    (await db.query<{ state: string }>('select state from gateway.idempotency_keys where company_id = $1 and key = $2', [companyId, key])).rows[0]?.state;
  const settled = (companyId: string, id: string, token: string) =>
    eventually(
      async () => {
        const r = await stack.http('GET', `/wallets/transactions/${id}`, { token });
        return r.status === 200 && ['COMPLETED', 'FAILED'].includes(r.body.status) ? r.body : undefined;
      },
      15_000,
      100,
    );

  it('the gateway times out after the transfer service accepted the send: 503; the retry with the key answers that transfer, one transfer and one reserve', async () => {
    const proxy = await replyHoldingProxy(transfer.address);
    let gw: StartedGateway | undefined;
    try {
      gw = await startGateway({
        databaseUrl: stack.databaseUrl,
        redisUrl: REDIS_URL,
        ledgerAddress: stack.ledger.address,
        transferAddress: proxy.address,
        namespace: `${stack.namespace}_to`,
        env: { LOG_LEVEL: 'silent', GATEWAY_MIGRATE_ON_START: 'false', GRPC_DEADLINE_MS: '30000', TRANSFER_SEND_DEADLINE_MS: '3000' },
      });
      const co = await company('Tiempo Agotado S.A.S.');
      const body = achBody(25_000);
      await warmUp(gw.url, co.writeKey);

      proxy.hold(); // the send reaches the transfer service; its answer does not come back
      const lost = await send(gw.url, co.writeKey, body, 'timeout-1');
      expect([lost.status, lost.body.error]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      const made = await acceptedUnder(co.id, 'timeout-1');
      // The gateway does not know the outcome: the key stays bound to the request (not dropped, not stored).
      expect(await claimOf(co.id, 'timeout-1')).toBe('UNKNOWN');
      proxy.release();

      // Another body under the key is refused; the same body answers the transfer the first one made.
      const other = await send(gw.url, co.writeKey, achBody(25_001), 'timeout-1');
      expect([other.status, other.body.error]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
      const retry = await send(gw.url, co.writeKey, body, 'timeout-1');
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toMatchObject({ id: made.id, amount: 25_000, rail: 'ACH' });
      expect(['PENDING', 'COMPLETED']).toContain(retry.body.status); // its state now
      expect(await claimOf(co.id, 'timeout-1')).toBe('DONE');
      // And from now on the stored answer replays.
      const again = await send(gw.url, co.writeKey, body, 'timeout-1');
      expect([again.status, again.headers.get('idempotent-replayed'), again.body.id]).toEqual([201, 'true', made.id]);

      expect(await settled(co.id, made.id, co.readKey)).toMatchObject({ id: made.id, status: 'COMPLETED' });
      expect([await transfersOf(co.id), await reservesOf(co.id)]).toEqual([1, 1]);
      const balance = await stack.http('GET', '/wallets/balance', { token: co.readKey });
      expect(balance.body.wallets.find((w: { rail: string }) => w.rail === 'ACH')).toMatchObject({ availableCents: String(1_000_000 - 25_000) });
    } finally {
      proxy.release();
      await gw?.stop();
      await proxy.close();
    }
  }, 60_000);

  it('the gateway is killed (SIGKILL) after the transfer service accepted the send: a new gateway answers the retry with that transfer at once', async () => {
    const proxy = await replyHoldingProxy(transfer.address);
    const gateways: ChildProcess[] = [];
    const logs: string[] = [];
    /** The gateway as its own process (dist/main.js, flags and environment as test/faults/run.mjs starts it), on the stack's database. */
    async function spawnGateway(): Promise<{ url: string; child: ChildProcess }> {
      const [port, opsPort] = [await freePort(), await freePort()];
      const env: Record<string, string | undefined> = {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        OTEL_SERVICE_NAME: 'gateway',
        GRPC_DEADLINE_MS: '30000',
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: String(port),
        GATEWAY_OPS_PORT: String(opsPort),
        GATEWAY_MIGRATE_ON_START: 'false',
        DATABASE_URL: stack.databaseUrl,
        REDIS_URL,
        RATE_LIMIT_PREFIX: `rl:${stack.namespace}_kill`,
        LEDGER_GRPC_ADDR: stack.ledger.address,
        TRANSFER_GRPC_ADDR: proxy.address,
        // Not used by this test; nothing listens there (as the in-process test gateway does).
        DEPOSIT_GRPC_ADDR: '127.0.0.1:1',
        COLLECT_KEY_GRPC_ADDR: '127.0.0.1:1',
        RECEIPT_GRPC_ADDR: '127.0.0.1:1',
        WEBHOOK_GRPC_ADDR: '127.0.0.1:1',
        // No MESH_TLS_DIR: outside production the process takes the development mesh PKI (the same one
        // the in-process stack uses; WALLET_DEV_PKI_DIR, if set, is inherited with process.env).
      };
      delete env.NODE_OPTIONS;
      delete env.MESH_TLS_DIR;
      const child = spawn(process.execPath, [...nodeFlags, 'dist/main.js'], {
        cwd: join(process.cwd(), '..', 'gateway'),
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      gateways.push(child);
      child.stdout!.on('data', (d: Buffer) => logs.push(d.toString()));
      child.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
      await eventually(
        async () => {
          if (child.exitCode !== null) throw new Error(`gateway exited ${child.exitCode}: ${logs.join('')}`);
          try {
            return (await fetch(`http://127.0.0.1:${opsPort}/healthz`, { signal: AbortSignal.timeout(1000) })).ok || undefined;
          } catch {
            return undefined;
          }
        },
        30_000,
        100,
      );
      return { url: `http://127.0.0.1:${port}`, child };
    }
    try {
      const co = await company('Proceso Caído S.A.S.');
      const body = achBody(35_000);
      const first = await spawnGateway();
      await warmUp(first.url, co.writeKey);

      proxy.hold();
      // The client's request: it will never get an answer (the gateway dies with it).
      const inFlight = fetch(`${first.url}/transfers/send`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { authorization: `Bearer ${co.writeKey}`, 'content-type': 'application/json', 'Idempotency-Key': 'killed-1' },
      }).then(
        (r) => `answered ${r.status}`,
        () => 'no answer',
      );
      const made = await acceptedUnder(co.id, 'killed-1');
      expect(await claimOf(co.id, 'killed-1')).toBe('IN_FLIGHT'); // the dead gateway's claim, locked for another minute
      const exited = new Promise((r) => first.child.once('exit', r));
      first.child.kill('SIGKILL');
      await exited;
      expect(await inFlight).toBe('no answer');
      proxy.release();

      const second = await spawnGateway();
      const retry = await send(second.url, co.writeKey, body, 'killed-1');
      // At once (no 409 IDEMPOTENCY_KEY_IN_USE while the dead claim is locked), and the same transfer.
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toMatchObject({ id: made.id, amount: 35_000, rail: 'ACH' });
      expect(await claimOf(co.id, 'killed-1')).toBe('DONE');
      const other = await send(second.url, co.writeKey, achBody(35_001), 'killed-1');
      expect([other.status, other.body.error]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);

      expect(await settled(co.id, made.id, co.readKey)).toMatchObject({ id: made.id, status: 'COMPLETED' });
      expect([await transfersOf(co.id), await reservesOf(co.id)]).toEqual([1, 1]);
    } finally {
      proxy.release();
      for (const g of gateways) {
        if (g.exitCode === null && g.signalCode === null) {
          const gone = new Promise((r) => g.once('exit', r));
          g.kill('SIGTERM');
          await gone;
        }
      }
      await proxy.close();
    }
  }, 90_000);
});
