import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, deleteNamespaceStreams, testNamespace } from '@wallet/platform/testing';
import { freePort } from './ports.js';

/**
 * Every process `npm run up` starts (deploy/local/processes.mjs), each a real Node process with the
 * product's start-up code (`node <NODE_FLAGS> --import @wallet/platform/otel dist/main.js`), on free
 * loopback ports, a fresh database and a NATS namespace of its own. For tests of what only the real
 * start-up shows (the telemetry bootstrap, loader hooks). Processes log at `warn` to the test's stderr
 * only when E2E_PROCESS_LOGS=1.
 */
export interface ProcessStack {
  gatewayUrl: string;
  sandboxUrl: string;
  adminToken: string;
  namespace: string;
  databaseUrl: string;
  pids: Record<string, number>;
  stop(): Promise<void>;
}

interface ProcessEntry {
  name: string;
  dir: string;
  main: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type StackOptions = { env?: Record<string, string>; envOf?: Record<string, Record<string, string>> };

/**
 * Starts the stack; again on fresh ports (at most 3 times) when a process exits before it is ready:
 * a port probed free can be taken before the process binds it (an outgoing connection of another
 * test picks its local port from the same range).
 */
export async function startProcessStack(opts: StackOptions = {}): Promise<ProcessStack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startProcessStackOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof ExitedBeforeReady)) throw err;
      console.warn(`[process-stack] attempt ${attempt}: ${err.message.slice(-2000)}; starting again on fresh ports`);
    }
  }
}

class ExitedBeforeReady extends Error {}

async function startProcessStackOnce(opts: StackOptions): Promise<ProcessStack> {
  const root = join(process.cwd(), '..');
  const { NODE_FLAGS, processes } = (await import(join(root, 'deploy', 'local', 'processes.mjs'))) as { NODE_FLAGS: string[]; processes: ProcessEntry[] };
  const tdb = await createTestDatabase('e2eproc');
  const namespace = testNamespace();
  const names = ['gateway', 'ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'reconciliation'] as const;
  const grpc: Record<string, number> = {};
  const ops: Record<string, number> = {};
  for (const n of names) {
    grpc[n] = await freePort();
    ops[n] = await freePort();
  }
  const [sandboxPort, smtpPort] = [await freePort(), await freePort()];
  const loc = (p: number) => `127.0.0.1:${p}`;
  const gw = `http://${loc(grpc.gateway!)}`;
  const sb = `http://${loc(sandboxPort)}`;
  const adminToken = 'dev-admin-token';
  const grpcOf = (n: string) => loc(grpc[n]!);
  const envs: Record<string, Record<string, string | number>> = {
    sandbox: { SANDBOX_PORT: sandboxPort, SANDBOX_SMTP_PORT: smtpPort, SANDBOX_PUBLIC_URL: sb, SANDBOX_BREB_CONFIRM_MS: 200, SANDBOX_ACH_CONFIRM_MS: 200 },
    ledger: { LEDGER_GRPC_PORT: grpc.ledger!, LEDGER_OPS_PORT: ops.ledger! },
    transfer: {
      TRANSFER_GRPC_PORT: grpc.transfer!,
      TRANSFER_OPS_PORT: ops.transfer!,
      LEDGER_GRPC_ADDR: grpcOf('ledger'),
      BREB_DIRECTORY_URL: sb,
      BREB_RAIL_URL: sb,
      ACH_RAIL_URL: sb,
      RAIL_CALLBACK_BASE_URL: `${gw}/webhooks/rails`,
    },
    'pse-deposit': {
      DEPOSIT_GRPC_PORT: grpc['pse-deposit']!,
      DEPOSIT_OPS_PORT: ops['pse-deposit']!,
      LEDGER_GRPC_ADDR: grpcOf('ledger'),
      COLLECT_KEY_GRPC_ADDR: grpcOf('collect-key'),
      PSE_PROVIDER_URL: sb,
      PSE_CALLBACK_URL: `${gw}/webhooks/pse`,
      SMTP_URL: `smtp://${loc(smtpPort)}`,
    },
    'collect-key': {
      COLLECT_KEY_GRPC_PORT: grpc['collect-key']!,
      COLLECT_KEY_OPS_PORT: ops['collect-key']!,
      LEDGER_GRPC_ADDR: grpcOf('ledger'),
      BREB_DIRECTORY_URL: sb,
      BREB_INCOMING_CALLBACK_URL: `${gw}/webhooks/breb/incoming`,
    },
    receipt: { RECEIPT_GRPC_PORT: grpc.receipt!, RECEIPT_OPS_PORT: ops.receipt! },
    webhook: { WEBHOOK_GRPC_PORT: grpc.webhook!, WEBHOOK_OPS_PORT: ops.webhook! },
    reconciliation: {
      RECONCILIATION_GRPC_PORT: grpc.reconciliation!,
      RECONCILIATION_OPS_PORT: ops.reconciliation!,
      LEDGER_GRPC_ADDR: grpcOf('ledger'),
      TRANSFER_GRPC_ADDR: grpcOf('transfer'),
      DEPOSIT_GRPC_ADDR: grpcOf('pse-deposit'),
      COLLECT_KEY_GRPC_ADDR: grpcOf('collect-key'),
      RECON_REPORTS_URL: `${sb}/sandbox/reports`,
      RECON_SCHEDULE: 'off',
    },
    gateway: {
      GATEWAY_PORT: grpc.gateway!,
      GATEWAY_OPS_PORT: ops.gateway!,
      LEDGER_GRPC_ADDR: grpcOf('ledger'),
      TRANSFER_GRPC_ADDR: grpcOf('transfer'),
      DEPOSIT_GRPC_ADDR: grpcOf('pse-deposit'),
      COLLECT_KEY_GRPC_ADDR: grpcOf('collect-key'),
      RECEIPT_GRPC_ADDR: grpcOf('receipt'),
      WEBHOOK_GRPC_ADDR: grpcOf('webhook'),
      RECONCILIATION_GRPC_ADDR: grpcOf('reconciliation'),
      RATE_LIMIT_PREFIX: namespace,
      SMTP_URL: `smtp://${loc(smtpPort)}`,
    },
  };
  const readyUrl = (n: string) => (n === 'sandbox' ? `${sb}/readyz` : `http://${loc(ops[n]!)}/readyz`);
  const common = {
    DATABASE_URL: tdb.url,
    BUS_NAMESPACE: namespace,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'development',
    ADMIN_TOKEN: adminToken,
  };
  const children: [string, ChildProcess][] = [];
  const pids: Record<string, number> = {};
  const stop = async () => {
    for (const [, c] of [...children].reverse()) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(children.map(([, c]) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r))))),
      new Promise((r) => (grace = setTimeout(r, 20_000))),
    ]);
    clearTimeout(grace);
    for (const [, c] of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await deleteNamespaceStreams(process.env.NATS_URL ?? 'nats://127.0.0.1:4222', namespace).catch(() => {});
    await tdb.drop().catch(() => {});
  };
  try {
    for (const p of processes) {
      const own = envs[p.name];
      if (!own) throw new Error(`deploy/local/processes.mjs has a process this helper does not know: ${p.name}`);
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        ...common,
        OTEL_SERVICE_NAME: p.name,
        ...opts.env,
        ...opts.envOf?.[p.name],
      };
      for (const [k, v] of Object.entries(own)) env[k] = String(v);
      delete env.NODE_OPTIONS;
      const child = spawn(process.execPath, [...NODE_FLAGS, '--import', '@wallet/platform/otel', p.main], {
        cwd: join(root, p.dir),
        env,
        stdio: ['ignore', process.env.E2E_PROCESS_LOGS === '1' ? 'inherit' : 'pipe', process.env.E2E_PROCESS_LOGS === '1' ? 'inherit' : 'pipe'],
      });
      // The last of what it wrote (its JSON log is on stdout), for the error when it does not start.
      let stderr = '';
      const keep = (c: Buffer) => {
        stderr = (stderr + c.toString()).slice(-4000);
      };
      child.stderr?.on('data', keep);
      child.stdout?.on('data', keep);
      children.push([p.name, child]);
      pids[p.name] = child.pid!;
      const until = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null) throw new ExitedBeforeReady(`${p.name} exited (${child.exitCode}) before it was ready: ${stderr}`);
        if (Date.now() > until) throw new Error(`${p.name} not ready after 60 s: ${stderr}`);
        try {
          if ((await fetch(readyUrl(p.name), { signal: AbortSignal.timeout(1000) })).ok) break;
        } catch {
          /* not yet */
        }
        await sleep(150);
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { gatewayUrl: gw, sandboxUrl: sb, adminToken, namespace, databaseUrl: tdb.url, pids, stop };
}
