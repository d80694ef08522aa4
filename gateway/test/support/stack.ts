import { createTestDatabase, deleteNamespaceStreams, freePort, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { startLedger } from '@wallet/ledger/testing';
import { startSandbox } from '@wallet/sandbox/testing';
import { startTransfer } from '@wallet/transfer/testing';
import { startDeposit } from '@wallet/pse-deposit/testing';
import { startCollectKey } from '@wallet/collect-key/testing';
import { startReceipt } from '@wallet/receipt/testing';
import { startWebhook } from '@wallet/webhook/testing';
import { startGateway, type StartedGateway } from '../../src/testing.js';
import { startReconciliationStandIn, type ReconciliationStandIn } from './reconciliation-stand-in.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A real ledger and transfer service (gRPC, Postgres, the sandbox rails) and a real gateway (HTTP, Postgres, Redis) for one test file. */
export interface Stack {
  gw: StartedGateway;
  ledger: { address: string; stop(): Promise<void> };
  db: TestDatabase;
  namespace: string;
  /** The provider simulators (e.g. `POST /sandbox/faults`). */
  sandboxUrl: string;
  /** Starts another gateway on the same database and ledger (other settings). */
  extraGateway(env: Record<string, string>): Promise<StartedGateway>;
  stop(): Promise<void>;
}

/**
 * `inboundCallbacks`: the gateway listens on a port chosen up front, and collect-key and pse-deposit
 * send the sandbox's inbound payments (Bre-B, PSE) to its /webhooks callbacks, as in production.
 */
export async function startStack(
  env: Record<string, string> = {},
  opts: {
    inboundCallbacks?: boolean;
    /** the transfer service's environment (e.g. a short POLICY_CHANGE_DELAY_SECONDS) */ transferEnv?: Record<string, string>;
  } = {},
): Promise<Stack> {
  const db = await createTestDatabase('gw');
  const gatewayPort = opts.inboundCallbacks ? await freePort() : undefined;
  const gatewayUrl = gatewayPort === undefined ? undefined : `http://127.0.0.1:${gatewayPort}`;
  const namespace = testNamespace();
  const extra: StartedGateway[] = [];
  let ledger: Awaited<ReturnType<typeof startLedger>> | undefined;
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  let transfer: Awaited<ReturnType<typeof startTransfer>> | undefined;
  let deposit: Awaited<ReturnType<typeof startDeposit>> | undefined;
  let collectKey: Awaited<ReturnType<typeof startCollectKey>> | undefined;
  let receipt: Awaited<ReturnType<typeof startReceipt>> | undefined;
  let webhook: Awaited<ReturnType<typeof startWebhook>> | undefined;
  let recon: ReconciliationStandIn | undefined;
  try {
    ledger = await startLedger({ databaseUrl: db.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'warn' });
    sandbox = await startSandbox({ databaseUrl: db.url, port: 0, env: { LOG_LEVEL: 'warn' } });
    transfer = await startTransfer({
      databaseUrl: db.url,
      natsUrl: NATS_URL,
      namespace,
      ledgerAddress: ledger.address,
      providerUrl: sandbox.url,
      port: 0,
      logLevel: 'warn',
      ...(opts.transferEnv ? { env: opts.transferEnv } : {}),
    });
    collectKey = await startCollectKey({
      databaseUrl: db.url,
      natsUrl: NATS_URL,
      namespace,
      ledgerAddress: ledger.address,
      providerUrl: sandbox.url,
      ...(gatewayUrl ? { callbackUrl: `${gatewayUrl}/webhooks/breb/incoming` } : {}),
      port: 0,
      logLevel: 'warn',
    });
    deposit = await startDeposit({
      databaseUrl: db.url,
      natsUrl: NATS_URL,
      namespace,
      ledgerAddress: ledger.address,
      collectKeyAddress: collectKey.address,
      providerUrl: sandbox.url,
      ...(gatewayUrl ? { callbackUrl: `${gatewayUrl}/webhooks/pse` } : {}),
      port: 0,
      logLevel: 'warn',
    });
    receipt = await startReceipt({ databaseUrl: db.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'warn' });
    webhook = await startWebhook({ databaseUrl: db.url, natsUrl: NATS_URL, namespace, port: 0, logLevel: 'warn' });
    const t = transfer;
    const dp = deposit;
    const ck = collectKey;
    const rc = receipt;
    const wh = webhook;
    const sb = sandbox;
    recon = await startReconciliationStandIn();
    const rn = recon;
    const gw = await startGateway({
      databaseUrl: db.url,
      redisUrl: env.REDIS_URL ?? REDIS_URL,
      ledgerAddress: ledger.address,
      transferAddress: t.address,
      depositAddress: dp.address,
      collectKeyAddress: ck.address,
      receiptAddress: rc.address,
      webhookAddress: wh.address,
      reconciliationAddress: rn.address,
      namespace,
      natsUrl: NATS_URL,
      busNamespace: namespace,
      smtpUrl: `smtp://127.0.0.1:${sb.smtpPort}`,
      ...(gatewayPort === undefined ? {} : { port: gatewayPort }),
      env: { LOG_LEVEL: 'warn', ...env },
    });
    const l = ledger;
    return {
      gw,
      ledger: l,
      db,
      namespace,
      sandboxUrl: sb.url,
      async extraGateway(moreEnv) {
        const g = await startGateway({
          databaseUrl: db.url,
          redisUrl: moreEnv.REDIS_URL ?? REDIS_URL,
          ledgerAddress: moreEnv.LEDGER_GRPC_ADDR ?? l.address,
          transferAddress: moreEnv.TRANSFER_GRPC_ADDR ?? t.address,
          depositAddress: dp.address,
          collectKeyAddress: ck.address,
          receiptAddress: rc.address,
          webhookAddress: wh.address,
          reconciliationAddress: rn.address,
          namespace: `${namespace}_${extra.length + 1}`,
          natsUrl: NATS_URL,
          busNamespace: namespace,
          smtpUrl: `smtp://127.0.0.1:${sb.smtpPort}`,
          env: { LOG_LEVEL: 'warn', GATEWAY_MIGRATE_ON_START: 'false', ...moreEnv },
        });
        extra.push(g);
        return g;
      },
      async stop() {
        for (const g of extra) await g.stop();
        await gw.stop();
        await rn.stop();
        await t.stop();
        await wh.stop();
        await rc.stop();
        await ck.stop();
        await dp.stop();
        await sb.stop();
        await l.stop();
        await deleteNamespaceStreams(NATS_URL, namespace).catch(() => undefined);
        await db.drop();
      },
    };
  } catch (err) {
    await recon?.stop().catch(() => undefined);
    await transfer?.stop().catch(() => undefined);
    await webhook?.stop().catch(() => undefined);
    await receipt?.stop().catch(() => undefined);
    await collectKey?.stop().catch(() => undefined);
    await deposit?.stop().catch(() => undefined);
    await sandbox?.stop().catch(() => undefined);
    await ledger?.stop().catch(() => undefined);
    await deleteNamespaceStreams(NATS_URL, namespace).catch(() => undefined);
    await db.drop().catch(() => undefined);
    throw err;
  }
}
