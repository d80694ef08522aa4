import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Bus, createAsyncClient, createLogger, type AppError, type CallContext } from '@wallet/platform';
import { createTestDatabase, deleteNamespaceStreams, eventually, testNamespace, type TestDatabase } from '@wallet/platform/testing';
import { collectKeyEventsV1, depositEventsV1, transferEventsV1, webhookV1 } from '@wallet/proto';
import { Webhook } from 'standardwebhooks';
import { startWebhook, type Resolver, type StartedWebhook } from '../../src/testing.js';
import { webhookAccess } from '../../src/grpc/webhook.handlers.js';
import { policyClient } from '@wallet/platform/testing';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export type WebhookClient = ReturnType<typeof createAsyncClient<webhookV1.WebhookServiceServer>>;

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
  /** What the receiver answered. */
  status: number;
}

/** What the receiver does with the next request: answer a status, or never answer (time-out). */
export type Behaviour = number | 'hang';

/**
 * A real HTTP receiver on loopback. `plan` is consumed one entry per request (then 200); `down()`
 * closes the listener (connection refused) and `up()` listens again on the same port.
 */
export class Receiver {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  port = 0;
  readonly received: Received[] = [];
  plan: Behaviour[] = [];

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const behaviour = this.plan.shift() ?? 200;
        let body = {} as Received['body'];
        try {
          body = JSON.parse(raw) as Received['body'];
        } catch {
          /* kept empty */
        }
        if (behaviour === 'hang') {
          this.received.push({ headers: req.headers, raw, body, status: 0 });
          this.hanging.add(res);
          return;
        }
        this.received.push({ headers: req.headers, raw, body, status: behaviour });
        res.writeHead(behaviour, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    for (const r of this.hanging) r.destroy();
    this.hanging.clear();
    for (const sock of this.sockets) sock.destroy();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** Requests answered 2xx, by event id. */
  delivered(): Received[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }
  ofType(type: string): Received[] {
    return this.received.filter((r) => r.body.type === type);
  }
}

/** A receiver's check, with the Standard Webhooks reference library (not our code): ok, or the library's reason. */
export function verify(r: Received, secret: string): { ok: true } | { ok: false; reason: string } {
  try {
    new Webhook(secret).verify(r.raw, r.headers as Record<string, string>);
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

export interface Instance {
  service: StartedWebhook;
  client: WebhookClient;
  stop(): Promise<void>;
}

export interface Harness {
  tdb: TestDatabase;
  namespace: string;
  bus: Bus;
  ctx(companyId?: string): CallContext;
  /** A webhook service on its own database (all instances share the bus namespace only if asked). */
  start(env?: Record<string, string>, resolver?: Resolver): Promise<Instance>;
  publishTransfer(subject: string, t: Partial<transferEventsV1.TransferEvent> & { transferId: string; companyId: string }, eventId?: string): Promise<string>;
  publishDeposit(subject: string, companyId: string, d: Partial<import('@wallet/proto').depositV1.Deposit> & { id: string }, eventId?: string): Promise<string>;
  publishCollectKey(subject: string, companyId: string, keyId: string): Promise<string>;
  stop(): Promise<void>;
}

/** A transfer event's JSON payload as the transfer service publishes it (a completed Bre-B send unless `t` says otherwise). */
export function transferPayload(t: Partial<transferEventsV1.TransferEvent> & { transferId: string; companyId: string }, eventId: string): unknown {
  const now = new Date();
  return transferEventsV1.TransferEvent.toJSON(
    transferEventsV1.TransferEvent.fromPartial({
      eventId,
      rail: 'RAIL_BREB' as never,
      status: 'MOVEMENT_STATUS_COMPLETED' as never,
      amount: 1_000_000n,
      totalFee: 5_000n,
      ivaAmount: 950n,
      netAmount: 1_000_000n,
      targetName: 'Ana Gómez',
      targetDocument: '1020304050',
      createdAt: now,
      occurredAt: now,
      ...t,
    }),
  );
}

/** A deposit event's JSON payload as the deposit service publishes it (an assigned PSE deposit unless `d` says otherwise). */
export function depositPayload(companyId: string, d: Partial<import('@wallet/proto').depositV1.Deposit> & { id: string }, eventId: string): unknown {
  const now = new Date();
  return depositEventsV1.DepositEvent.toJSON({
    eventId,
    companyId,
    occurredAt: now,
    deposit: {
      status: 'ASSIGNED',
      amountCents: 5_000_000n,
      feeAmountCents: 10_000n,
      ivaAmountCents: 1_900n,
      netAmountCents: 4_988_100n,
      currency: 'COP',
      source: 'PSE',
      createdAt: now,
      ...d,
    },
  });
}

/** One database and namespace per test file; `start` adds service instances (each on its own schema copy: its own database). */
export async function startHarness(): Promise<Harness> {
  const tdb = await createTestDatabase('webhook');
  const namespace = testNamespace();
  const bus = await Bus.connect({ url: NATS_URL, namespace, name: 'webhook-test', logger: createLogger('test', 'silent') });
  for (const s of ['TRANSFERS', 'DEPOSITS', 'COLLECT_KEYS'] as const) await bus.ensureStream(s);
  const instances: Instance[] = [];
  const extraDbs: TestDatabase[] = [];
  const ctx = (companyId?: string): CallContext => ({ requestId: randomUUID(), ...(companyId ? { companyId } : {}) });
  const publish = async (subject: string, payload: unknown, id: string) => {
    await bus.publish({ id, subject, payload, time: new Date().toISOString(), source: 'test' });
    return id;
  };
  return {
    tdb,
    namespace,
    bus,
    ctx,
    async start(env = {}, resolver) {
      // The first instance consumes the namespace's streams; others get their own namespace and database.
      const first = instances.length === 0;
      const db = first ? tdb : await createTestDatabase('webhook');
      if (!first) extraDbs.push(db);
      const service = await startWebhook({
        databaseUrl: db.url,
        natsUrl: NATS_URL,
        namespace: first ? namespace : testNamespace(),
        env,
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        ...(resolver ? { resolver } : {}),
      });
      const client = policyClient<webhookV1.WebhookServiceServer>(webhookV1.WebhookServiceClient, service.address, 'webhook', webhookAccess, 15_000);
      const inst = {
        service,
        client,
        async stop() {
          client.close();
          await service.stop();
        },
      };
      instances.push(inst);
      return inst;
    },
    publishTransfer(subject, t, eventId = randomUUID()) {
      return publish(subject, transferPayload(t, eventId), eventId);
    },
    publishDeposit(subject, companyId, d, eventId = randomUUID()) {
      return publish(subject, depositPayload(companyId, d, eventId), eventId);
    },
    publishCollectKey(subject, companyId, keyId) {
      const eventId = randomUUID();
      const now = new Date();
      const payload = collectKeyEventsV1.CollectKeyEvent.toJSON({
        eventId,
        companyId,
        occurredAt: now,
        key: { id: keyId, externalId: 'cust-1', name: 'Cliente', keyType: 'ALPHANUM', keyValue: '@abcdefghij', state: 'ACTIVE', createdAt: now },
      });
      return publish(subject, payload, eventId);
    },
    async stop() {
      for (const i of instances) await i.stop();
      await bus.close();
      await deleteNamespaceStreams(NATS_URL, namespace);
      await tdb.drop();
      for (const d of extraDbs) await d.drop();
    },
  };
}

export async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected the call to fail');
}

/** Waits until the dispatcher has handled every published event (so "nothing was created" is a fact, not a wait). */
export async function dispatched(i: Instance): Promise<void> {
  await eventually(() => i.service.dispatcher.idle(), 15_000);
}

export { eventually };
