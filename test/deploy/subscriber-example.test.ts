// docs/examples/subscriber: it typechecks on its own, its handler de-duplicates on ce-id and
// terminates poison messages, and its durable consumer does so against the real NATS JetStream.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { connect, headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { REPO } from './support/helm.js';

// Loaded by path (the example is its own project, outside this workspace's tsconfig); its own
// types are checked by the first test. These mirror the parts used here.
const EXAMPLE = join(REPO, 'docs', 'examples', 'subscriber');
interface IncomingMessage {
  subject: string;
  headers?: { get(name: string): string };
  data: Uint8Array;
}
interface WalletEvent<T = any> {
  id: string;
  type: string;
  source: string;
  time: string;
  traceparent?: string;
  data: T;
}
type TransferEvent = { transferId: string; amount: string; [k: string]: unknown };
let handleMessage: (m: IncomingMessage, seen: unknown, onEvent: (e: WalletEvent) => Promise<void>) => Promise<string>;
let decodeEvent: <T>(m: IncomingMessage) => WalletEvent<T>;
let MemorySeenIds: new (max?: number) => { has(id: string): boolean; add(id: string): void };
let runSubscriber: <T>(o: {
  servers: string;
  stream: string;
  durable: string;
  filterSubject: string;
  signal?: AbortSignal;
  onEvent(e: WalletEvent<T>): Promise<void>;
  onOutcome?(o: string, subject: string): void;
}) => Promise<void>;

beforeAll(async () => {
  ({ handleMessage, decodeEvent, MemorySeenIds } = await import(join(EXAMPLE, 'src', 'handler.ts')));
  ({ runSubscriber } = await import(join(EXAMPLE, 'src', 'subscriber.ts')));
});
const encoder = new TextEncoder();

function message(subject: string, hdrs: Record<string, string>, body: unknown): IncomingMessage {
  const map = new Map(Object.entries(hdrs));
  return { subject, headers: { get: (k) => map.get(k) ?? '' }, data: encoder.encode(typeof body === 'string' ? body : JSON.stringify(body)) };
}
const ce = (id: string, type = 'transfer.created') => ({
  'ce-id': id,
  'ce-type': type,
  'ce-source': 'transfer',
  'ce-time': '2026-11-21T10:00:00.000Z',
  'ce-specversion': '1.0',
  'content-type': 'application/json',
});
const body = (id: string) => ({
  eventId: id,
  transferId: 't1',
  companyId: 'c1',
  rail: 'RAIL_BREB',
  status: 'MOVEMENT_STATUS_PENDING',
  amount: '100000',
  netAmount: '99643',
  occurredAt: '2026-11-21T10:00:00.000Z',
});

describe('example subscriber (docs/examples/subscriber)', () => {
  it('typechecks as a standalone TypeScript project', () => {
    const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', join(EXAMPLE, 'tsconfig.json'), '--noEmit'], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('decodes the CloudEvents headers and the proto3 JSON body', () => {
    const e = decodeEvent<TransferEvent>(message('ns.transfer.completed', { ...ce('e1', 'transfer.completed'), traceparent: '00-abc-def-01' }, body('e1')));
    expect(e).toEqual({
      id: 'e1',
      type: 'transfer.completed',
      source: 'transfer',
      time: '2026-11-21T10:00:00.000Z',
      traceparent: '00-abc-def-01',
      data: body('e1'),
    });
    expect(typeof e.data.amount).toBe('string');
  });

  it('handles each ce-id once, retries failed effects, and terminates poison messages', async () => {
    const seen = new MemorySeenIds();
    const handled: string[] = [];
    const onEvent = async (e: WalletEvent) => {
      handled.push(e.id);
    };
    expect(await handleMessage(message('transfer.created', ce('e1'), body('e1')), seen, onEvent)).toBe('handled');
    expect(await handleMessage(message('transfer.created', ce('e1'), body('e1')), seen, onEvent)).toBe('duplicate');
    expect(await handleMessage(message('transfer.created', ce('e2'), body('e2')), seen, onEvent)).toBe('handled');
    expect(handled).toEqual(['e1', 'e2']);
    // A failing effect is not recorded as seen: the redelivery runs it again.
    const failing = async () => {
      throw new Error('db down');
    };
    await expect(handleMessage(message('transfer.failed', ce('e3'), body('e3')), seen, failing)).rejects.toThrow('db down');
    expect(await handleMessage(message('transfer.failed', ce('e3'), body('e3')), seen, onEvent)).toBe('handled');
    expect(await handleMessage(message('transfer.created', {}, body('x')), seen, onEvent)).toBe('poison');
    expect(await handleMessage(message('transfer.created', ce('e4'), 'not json'), seen, onEvent)).toBe('poison');
    // Bounded memory: the oldest ids are forgotten first.
    const small = new MemorySeenIds(2);
    small.add('a');
    small.add('b');
    small.add('c');
    expect([small.has('a'), small.has('b'), small.has('c')]).toEqual([false, true, true]);
  });

  it('consumes a JetStream stream durably: each event once, redeliveries skipped, poison terminated', async () => {
    const ns = `subex${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const stream = `${ns.toUpperCase()}_TRANSFERS`;
    const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${ns}.transfer.>`] });
    try {
      const js = jetstream(nc);
      const publish = async (msgId: string, h: Record<string, string>, b: unknown) => {
        const hs = natsHeaders();
        for (const [k, v] of Object.entries(h)) hs.set(k, v);
        await js.publish(`${ns}.${h['ce-type'] ?? 'transfer.created'}`, typeof b === 'string' ? b : JSON.stringify(b), { msgID: msgId, headers: hs });
      };
      await publish('m1', ce('e1'), body('e1'));
      await publish('m2', ce('e2', 'transfer.completed'), body('e2'));
      await publish('m3', ce('e1'), body('e1')); // the same event again (a re-publish after the duplicate window)
      await publish('m4', { 'ce-type': 'transfer.created' }, 'garbage');

      const handled: string[] = [];
      const outcomes: string[] = [];
      const controller = new AbortController();
      await runSubscriber<TransferEvent>({
        servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
        stream,
        durable: 'example-test',
        filterSubject: `${ns}.transfer.>`,
        signal: controller.signal,
        async onEvent(e) {
          handled.push(`${e.type}:${e.data.transferId}:${e.id}`);
        },
        onOutcome(o) {
          outcomes.push(o);
          if (outcomes.length === 4) controller.abort();
        },
      });
      expect(handled).toEqual(['transfer.created:t1:e1', 'transfer.completed:t1:e2']);
      expect(outcomes).toEqual(['handled', 'handled', 'duplicate', 'poison']);
      // Everything was acknowledged or terminated: nothing is pending for the durable.
      const info = await jsm.consumers.info(stream, 'example-test');
      expect(info.num_ack_pending).toBe(0);
      expect(info.num_pending).toBe(0);
    } finally {
      await jsm.streams.delete(stream);
      await nc.drain();
    }
  });
});
