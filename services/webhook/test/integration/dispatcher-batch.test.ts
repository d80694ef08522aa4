import { randomUUID } from 'node:crypto';
import type { Database, ReceivedEvent, SqlTx } from '@wallet/platform';
import { eventBody, mapSourceEvent } from '../../src/domain/event-types.js';
import { depositPayload, startHarness, transferPayload, type Harness, type Instance } from './harness.js';

const HORIZON_S = 86_400; // WEBHOOK_RETRY_HORIZON_SECONDS's default

/** What a page left in the webhook tables: its events, and its deliveries in seq order (the worker's order). */
interface Snapshot {
  events: Record<string, unknown>[];
  deliveries: Record<string, unknown>[];
  created: number;
  statements: number;
}

class Rollback extends Error {
  constructor(readonly snapshot: Snapshot) {
    super('rollback');
  }
}

/**
 * Runs `apply` in a prepared-statement transaction (the InboxConsumer's kind), reads what it wrote,
 * then rolls back: each path starts from the same committed state and writes the same event ids.
 */
async function run(db: Database, companies: string[], apply: (tx: SqlTx, wrote: (n: number) => void) => Promise<void>): Promise<Snapshot> {
  try {
    await db.preparedTx(async (tx) => {
      let statements = 0;
      let created = 0;
      const counted: SqlTx = {
        query: (sql, params) => {
          statements += 1;
          return tx.query(sql, params);
        },
        one: (sql, params) => {
          statements += 1;
          return tx.one(sql, params);
        },
      };
      await apply(counted, (n) => {
        created += n;
      });
      const events = await tx.query(
        `select id, company_id, type, resource_key, resource_id, body, created_at from webhook.events where company_id = any($1::text[]) order by id`,
        [companies],
      );
      const deliveries = await tx.query(
        `select company_id, endpoint_id, event_id, event_type, resource_key, status, attempts, replay_of, id like 'whd\\_%' as id_ok,
                give_up_at = now() + make_interval(secs => $2) as give_up_ok, next_attempt_at = now() as due_now
         from webhook.deliveries where company_id = any($1::text[]) order by seq`,
        [companies, HORIZON_S],
      );
      throw new Rollback({ events, deliveries, created, statements });
    });
  } catch (err) {
    if (err instanceof Rollback) return err.snapshot;
    throw err;
  }
  throw new Error('unreachable');
}

/**
 * The oracle: the statements the dispatcher ran per event before pages were written at once
 * (one endpoint read per public event, then the event and each delivery one row at a time).
 */
async function perEventStatements(tx: SqlTx, page: ReceivedEvent[], wrote: (n: number) => void): Promise<void> {
  for (const evt of page) {
    let events;
    try {
      events = mapSourceEvent(evt);
    } catch {
      continue;
    }
    for (const e of events) {
      const endpoints = await tx.query<{ id: string }>(
        `select id from webhook.endpoints where company_id = $1 and enabled and deleted_at is null and $2 = any(events) order by created_at, id`,
        [e.companyId, e.type],
      );
      if (endpoints.length === 0) continue;
      await tx.query(
        `insert into webhook.events (id, company_id, type, resource_key, resource_id, body, created_at) values ($1, $2, $3, $4, $5, $6, $7) on conflict (id) do nothing`,
        [e.id, e.companyId, e.type, e.resourceKey, e.resourceId, eventBody(e), e.createdAt],
      );
      for (const ep of endpoints) {
        const rows = await tx.query(
          `insert into webhook.deliveries (id, company_id, endpoint_id, event_id, event_type, resource_key, give_up_at)
           values ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) on conflict (endpoint_id, event_id) where replay_of is null do nothing returning id`,
          [`whd_${randomUUID().replace(/-/g, '').slice(0, 24)}`, e.companyId, ep.id, e.id, e.type, e.resourceKey, HORIZON_S],
        );
        if (rows.length > 0) wrote(rows.length);
      }
    }
  }
}

describe('dispatcher: a page of events written at once', () => {
  let h: Harness;
  let svc: Instance;

  beforeAll(async () => {
    h = await startHarness();
    svc = await h.start();
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('writes the same events and deliveries, in the same order, as one event at a time, with three statements for the page', async () => {
    const [coA, coB, coC] = [`co-${randomUUID()}`, `co-${randomUUID()}`, `co-${randomUUID()}`];
    const url = 'http://127.0.0.1:9/hooks';
    const create = async (co: string, events: string[], enabled = true) => (await svc.client.createEndpoint({ url, events, enabled }, h.ctx(co))).endpoint!.id;
    // Company A: two endpoints (both hear transfer.failed), one disabled; company B: one; company C: none.
    const a1 = await create(coA, ['transfer.completed', 'transfer.failed']);
    const a2 = await create(coA, ['transfer.failed', 'deposit.paid', 'collect_key.payment_received']);
    const aOff = await create(coA, ['transfer.completed', 'transfer.failed', 'deposit.paid'], false);
    const b1 = await create(coB, ['deposit.paid']);
    const label: Record<string, string> = { [a1]: 'a1', [a2]: 'a2', [aOff]: 'aOff', [b1]: 'b1' };

    const t1 = randomUUID();
    const t2 = randomUUID();
    let streamSeq = 0;
    const evt = (subject: string, payload: unknown, id = randomUUID()): ReceivedEvent => ({
      id,
      subject,
      payload,
      time: new Date().toISOString(),
      traceparent: undefined,
      redelivered: false,
      stream: subject.startsWith('deposit.') ? 'DEPOSITS' : 'TRANSFERS',
      streamSeq: ++streamSeq,
    });
    const first = evt('transfer.completed', transferPayload({ transferId: t1, companyId: coA }, 'x'));
    const page: ReceivedEvent[] = [
      first, //                                                                                  → a1
      evt('transfer.rejected', transferPayload({ transferId: t2, companyId: coA, status: 'MOVEMENT_STATUS_FAILED' as never }, 'x')), // rejected: none; failed → a1, a2
      evt(
        'deposit.paid',
        depositPayload(coA, { id: 'dep_breb', source: 'BREB', brebKey: { id: 'bkey_1', externalId: 'c-1', name: 'Cliente', value: '@abcdefghij' } }, 'x'),
      ), // → a2, a2
      evt('transfer.completed', { companyId: coA }), //                                          undecodable: skipped
      evt('transfer.completed', transferPayload({ transferId: randomUUID(), companyId: coC }, 'x')), // no endpoint
      evt('deposit.paid', depositPayload(coB, { id: 'dep_pse' }, 'x')), //                        → b1
      evt('transfer.dispatched', transferPayload({ transferId: t1, companyId: coA }, 'x')), //    internal: no public event
      { ...first }, //                                                                            the same event id again: nothing more
      evt('transfer.completed', transferPayload({ transferId: randomUUID(), companyId: coB }, 'x')), // B does not subscribe to it
      evt('transfer.failed', transferPayload({ transferId: t1, companyId: coA, status: 'MOVEMENT_STATUS_FAILED' as never }, 'x')), // → a1, a2
    ];
    const companies = [coA, coB, coC];
    const d = svc.service.dispatcher;
    const db = svc.service.db;

    const oracle = await run(db, companies, (tx, wrote) => perEventStatements(tx, page, wrote));
    const oneByOne = await run(db, companies, async (tx, wrote) => {
      const handler = d.handler(wrote);
      for (const e of page) await handler(e, tx);
    });
    const batch = await run(db, companies, (tx, wrote) => d.batchHandler(wrote)(page, tx));

    const shape = (s: Snapshot) => s.deliveries.map((r) => `${String(r.event_type)}:${String(r.resource_key)}→${label[String(r.endpoint_id)]}`);
    expect(shape(oracle)).toEqual([
      `transfer.completed:transfer:${t1}→a1`,
      `transfer.failed:transfer:${t2}→a1`,
      `transfer.failed:transfer:${t2}→a2`,
      'deposit.paid:deposit:dep_breb→a2',
      'collect_key.payment_received:deposit:dep_breb→a2',
      'deposit.paid:deposit:dep_pse→b1',
      `transfer.failed:transfer:${t1}→a1`,
      `transfer.failed:transfer:${t1}→a2`,
    ]);
    expect(oracle.events).toHaveLength(6);
    for (const r of oracle.deliveries)
      expect(r).toMatchObject({ status: 'PENDING', attempts: 0, replay_of: null, id_ok: true, give_up_ok: true, due_now: true });
    expect(oracle.created).toBe(8);

    for (const s of [oneByOne, batch]) {
      expect(s.events).toEqual(oracle.events);
      expect(s.deliveries).toEqual(oracle.deliveries);
      expect(s.created).toBe(oracle.created);
    }
    // One endpoint read, one insert of events, one of deliveries: however many events the page holds.
    expect(batch.statements).toBe(3);
    expect(oracle.statements).toBe(10 + 7 + 9); // 10 public events: a read each; 7 event inserts (one a repeat); 9 delivery inserts (one a repeat)
  });

  it('a page of events nobody subscribes to reads the endpoints once and writes nothing; one with nothing public runs no statement', async () => {
    const co = `co-${randomUUID()}`;
    const d = svc.service.dispatcher;
    const evt = (subject: string, payload: unknown): ReceivedEvent => ({
      id: randomUUID(),
      subject,
      payload,
      time: undefined,
      traceparent: undefined,
      redelivered: false,
      stream: 'TRANSFERS',
      streamSeq: 1,
    });
    const unsubscribed = await run(svc.service.db, [co], (tx, wrote) =>
      d.batchHandler(wrote)(
        [
          evt('transfer.completed', transferPayload({ transferId: randomUUID(), companyId: co }, 'x')),
          evt('deposit.paid', depositPayload(co, { id: 'dep_1' }, 'x')),
        ],
        tx,
      ),
    );
    expect(unsubscribed).toEqual({ events: [], deliveries: [], created: 0, statements: 1 });
    const internal = await run(svc.service.db, [co], (tx, wrote) =>
      d.batchHandler(wrote)(
        [evt('transfer.dispatched', transferPayload({ transferId: randomUUID(), companyId: co }, 'x')), evt('transfer.completed', 'not a transfer')],
        tx,
      ),
    );
    expect(internal).toEqual({ events: [], deliveries: [], created: 0, statements: 0 });
  });
});
