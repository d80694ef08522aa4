import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Bus, createLogger, type ReceivedEvent } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { depositEventsV1, type depositV1 } from '@wallet/proto';
import { newDepositId } from '../../src/domain/deposit.js';
import { brebListingHandler, brebListingPageHandler } from '../../src/app/breb-listing.js';
import { sqlBrebListing } from '../../src/persistence/breb-listing.js';
import { NATS_URL, failure, payer, startHarness, type Harness } from './harness.js';

/**
 * The Bre-B feed: DepositEvents published on DEPOSITS exactly as the collect-key service does
 * (`deposit.paid` / `deposit.unassigned`, id = eventId, source BREB) land in the listing beside the
 * PSE deposits.
 */
describe('Bre-B collect-key deposits in the listing', () => {
  let h: Harness;
  let bus: Bus;
  beforeAll(async () => {
    h = await startHarness();
    bus = await Bus.connect({ url: NATS_URL, namespace: h.namespace, name: 'test-collect-key', logger: createLogger('test', 'silent') });
  });
  afterAll(async () => {
    await bus?.close();
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const key = (n: string) => ({
    id: `ck_${n}_${randomUUID().slice(0, 8)}`,
    externalId: `ext-${n}-${randomUUID().slice(0, 8)}`,
    name: `Caja ${n}`,
    value: `@${n}`,
  });
  type Key = ReturnType<typeof key>;

  async function publishBreb(o: {
    companyId: string;
    id?: string;
    status: 'ASSIGNED' | 'UNASSIGNED';
    key: Key;
    amount?: bigint;
    createdAt?: Date;
    occurredAt?: Date;
    eventId?: string;
  }): Promise<{ id: string; eventId: string; createdAt: Date }> {
    const id = o.id ?? newDepositId();
    const eventId = o.eventId ?? randomUUID();
    const createdAt = o.createdAt ?? new Date();
    const amount = o.amount ?? 50_000n;
    const fee = o.status === 'ASSIGNED' ? 500n : 0n;
    const iva = o.status === 'ASSIGNED' ? 95n : 0n;
    const deposit: depositV1.Deposit = {
      id,
      status: o.status,
      amountCents: amount,
      feeAmountCents: fee,
      ivaAmountCents: iva,
      netAmountCents: amount - fee - iva,
      currency: 'COP',
      source: 'BREB',
      brebKey: o.key,
      payerName: 'Luis Gómez',
      payerDocument: 'CC 79111222',
      payerBank: 'Nequi',
      providerTransferId: `tr-${id}`,
      providerConfirmedAt: createdAt,
      createdAt,
    };
    const occurredAt = o.occurredAt ?? new Date();
    const payload = depositEventsV1.DepositEvent.toJSON({ eventId, companyId: o.companyId, deposit, occurredAt });
    await bus.publish({
      id: eventId,
      subject: o.status === 'ASSIGNED' ? 'deposit.paid' : 'deposit.unassigned',
      payload,
      time: occurredAt.toISOString(),
      source: 'collect-key',
    });
    return { id, eventId, createdAt };
  }

  const list = (co: string, q: Partial<depositV1.ListDepositsRequest> = {}) =>
    h.client.listDeposits({ page: 0, limit: 20, cursorMode: false, ...q }, h.ctx(co));
  const ids = async (co: string, q: Partial<depositV1.ListDepositsRequest> = {}) => (await list(co, q)).deposits.map((d) => d.id);
  const tick = () => new Promise((r) => setTimeout(r, 15));
  /** Events of one consumer are handled in stream order: once a later marker is listed, the earlier ones were handled. */
  async function barrier(co: string, k: Key): Promise<string> {
    const m = await publishBreb({ companyId: co, status: 'ASSIGNED', key: k, createdAt: new Date('2020-01-01T00:00:00Z') });
    await eventually(async () => (await ids(co, { brebKeyId: k.id })).includes(m.id));
    return m.id;
  }
  const rowCount = async (id: string) =>
    Number((await h.deposit.db.query<{ n: string }>(`select count(*)::text as n from pse_deposit.deposits where id = ?`, [id]))[0]!.n);

  it('lists Bre-B and PSE deposits together newest first, with the rail / externalId / brebKeyId filters and company isolation', async () => {
    const co = await h.newCompany();
    const other = await h.newCompany();
    const k1 = key('one'),
      k2 = key('two'),
      k3 = key('three');

    const pse1 = (await h.client.createPseDeposit(payer(), h.ctx(co))).id;
    await tick();
    const b1 = await publishBreb({ companyId: co, status: 'ASSIGNED', key: k1, amount: 70_000n });
    await tick();
    const pse2 = (await h.client.createPseDeposit(payer(), h.ctx(co))).id;
    await tick();
    const b2 = await publishBreb({ companyId: co, status: 'UNASSIGNED', key: k2 });
    const b3 = await publishBreb({ companyId: other, status: 'ASSIGNED', key: k3 });

    await eventually(async () => (await list(co)).total === 4);
    await eventually(async () => (await list(other)).total === 1);

    // Page style: newest first across both sources.
    const all = await list(co);
    expect(all).toMatchObject({ total: 4, page: 0, limit: 20, totalPages: 1 });
    expect(all.deposits.map((d) => d.id)).toEqual([b2.id, pse2, b1.id, pse1]);
    expect(all.deposits.find((d) => d.id === b1.id)).toMatchObject({
      status: 'ASSIGNED',
      source: 'BREB',
      amountCents: 70_000n,
      feeAmountCents: 500n,
      ivaAmountCents: 95n,
      netAmountCents: 69_405n,
      currency: 'COP',
      brebKey: k1,
      payerName: 'Luis Gómez',
      payerDocument: 'CC 79111222',
      payerBank: 'Nequi',
      providerTransferId: `tr-${b1.id}`,
      createdAt: b1.createdAt,
    });
    // An UNASSIGNED deposit carries the key it was paid to (CONTRACT §6).
    expect(all.deposits.find((d) => d.id === b2.id)).toMatchObject({
      status: 'UNASSIGNED',
      source: 'BREB',
      brebKey: k2,
      feeAmountCents: 0n,
      netAmountCents: 50_000n,
    });
    expect(all.deposits.find((d) => d.id === pse1)).toMatchObject({ source: 'PSE', status: 'PENDING_CONFIRM' });
    expect(all.deposits.find((d) => d.id === pse1)!.brebKey).toBeUndefined();

    // Filters.
    expect(await ids(co, { rail: 'BREB' })).toEqual([b2.id, b1.id]);
    expect(await ids(co, { rail: 'breb' })).toEqual([b2.id, b1.id]);
    expect(await ids(co, { rail: 'PSE' })).toEqual([pse2, pse1]);
    expect(await ids(co, { externalId: k1.externalId })).toEqual([b1.id]);
    expect(await ids(co, { brebKeyId: k2.id })).toEqual([b2.id]);
    expect(await ids(co, { rail: 'BREB', status: 'UNASSIGNED' })).toEqual([b2.id]);
    expect(await ids(co, { status: 'PAID' })).toEqual([b1.id]);
    expect((await list(co, { externalId: k1.externalId, brebKeyId: k2.id })).total).toBe(0);

    // Cursor style with a filter.
    const c1 = await list(co, { rail: 'BREB', limit: 1, cursorMode: true });
    expect(c1.deposits.map((d) => d.id)).toEqual([b2.id]);
    expect(c1.nextCursor).toBeTruthy();
    const c2 = await list(co, { rail: 'BREB', limit: 1, cursorMode: true, cursor: c1.nextCursor! });
    expect(c2.deposits.map((d) => d.id)).toEqual([b1.id]);
    expect(c2.nextCursor).toBeUndefined();
    const cb = await list(co, { brebKeyId: k1.id, limit: 5, cursorMode: true });
    expect(cb.deposits.map((d) => d.id)).toEqual([b1.id]);
    expect(cb.nextCursor).toBeUndefined();
    const mixed = await list(co, { limit: 3, cursorMode: true });
    const rest = await list(co, { limit: 3, cursorMode: true, cursor: mixed.nextCursor! });
    expect([...mixed.deposits, ...rest.deposits].map((d) => d.id)).toEqual([b2.id, pse2, b1.id, pse1]);

    // GetDeposit, and company isolation.
    expect(await h.client.getDeposit({ id: b2.id }, h.ctx(co))).toMatchObject({ id: b2.id, status: 'UNASSIGNED', brebKey: k2 });
    expect(await ids(other)).toEqual([b3.id]);
    expect(await ids(other, { brebKeyId: k1.id })).toEqual([]);
    expect(await ids(co, { brebKeyId: k3.id })).toEqual([]);
    expect((await failure(h.client.getDeposit({ id: b3.id }, h.ctx(co)))).code).toBe('DEPOSIT_NOT_FOUND');
    expect((await failure(h.client.getDeposit({ id: b1.id }, h.ctx(other)))).code).toBe('DEPOSIT_NOT_FOUND');

    // ShareByEmail refuses a Bre-B deposit (never PENDING_CONFIRM).
    const share = await failure(
      h.client.shareByEmail(
        {
          depositId: b2.id,
          recipientEmail: 'x@example.com',
        },
        h.ctx(co),
      ),
    );
    expect(share.code).toBe('DEPOSIT_NOT_PENDING');
    // This service's own PSE events on the same stream were consumed and changed nothing.
    expect(await rowCount(pse1)).toBe(1);
  });

  it('a repeated event, the same deposit under a new event id, an older event arriving late and a clashing company change nothing', async () => {
    const co = await h.newCompany();
    const other = await h.newCompany();
    const k = key('dup');
    const t0 = new Date(Date.now() - 60_000);
    const first = await publishBreb({ companyId: co, status: 'ASSIGNED', key: k, createdAt: t0, occurredAt: new Date(t0.getTime() + 1_000) });
    await eventually(async () => (await ids(co)).includes(first.id));

    // Same event id again (JetStream or the inbox drops it), same deposit under a new event id,
    // an older UNASSIGNED event for it, and the same deposit id claimed by another company.
    await publishBreb({ companyId: co, id: first.id, eventId: first.eventId, status: 'ASSIGNED', key: k, createdAt: t0 });
    await publishBreb({ companyId: co, id: first.id, status: 'ASSIGNED', key: k, createdAt: t0, occurredAt: new Date(t0.getTime() + 5_000) });
    await publishBreb({ companyId: co, id: first.id, status: 'UNASSIGNED', key: k, createdAt: t0, occurredAt: new Date(t0.getTime() + 500) });
    await publishBreb({ companyId: other, id: first.id, status: 'UNASSIGNED', key: k, createdAt: t0 });
    await barrier(co, k);

    expect(await rowCount(first.id)).toBe(1);
    const got = await h.client.getDeposit({ id: first.id }, h.ctx(co));
    expect(got).toMatchObject({ status: 'ASSIGNED', source: 'BREB', brebKey: k, createdAt: t0, netAmountCents: 49_405n });
    expect((await list(co, { brebKeyId: k.id })).total).toBe(2); // the deposit + the barrier marker
    expect((await list(other)).total).toBe(0);
    const history = await h.deposit.db.query<{ status: string }>(`select status from pse_deposit.state_history where deposit_id = ? order by seq`, [first.id]);
    expect(history.map((r) => r.status)).toEqual(['ASSIGNED']);
    const inbox = await h.deposit.db.query<{ n: string }>(
      `select count(*)::text as n from pse_deposit.inbox where consumer = 'pse-deposit-listing' and event_id = ?`,
      [first.eventId],
    );
    expect(inbox[0]!.n).toBe('1');

    // A newer event with another final state does move it (out of order, newest wins).
    const later = await publishBreb({ companyId: co, status: 'UNASSIGNED', key: k, createdAt: t0, occurredAt: new Date(t0.getTime() + 9_000) });
    await publishBreb({ companyId: co, id: later.id, status: 'ASSIGNED', key: k, createdAt: t0, occurredAt: new Date(t0.getTime() + 8_000) });
    await publishBreb({ companyId: co, id: first.id, status: 'UNASSIGNED', key: k, createdAt: t0, occurredAt: new Date(t0.getTime() + 10_000) });
    await barrier(co, k);
    expect((await h.client.getDeposit({ id: later.id }, h.ctx(co))).status).toBe('UNASSIGNED');
    expect(await h.client.getDeposit({ id: first.id }, h.ctx(co))).toMatchObject({ status: 'UNASSIGNED', createdAt: t0, netAmountCents: 50_000n });
    expect(await rowCount(first.id)).toBe(1);
  });

  it('a page of events lists what applying them one at a time lists (repeats, reorderings and one deposit twice in a page included)', async () => {
    const silent = createLogger('listing-test', 'silent');
    const one = brebListingHandler(sqlBrebListing, silent);
    const page = brebListingPageHandler(sqlBrebListing, silent);
    const t0 = Date.parse('2026-11-01T12:00:00Z');
    const event = fc.record({
      deposit: fc.nat(3),
      status: fc.constantFrom<'ASSIGNED' | 'UNASSIGNED' | 'REVERSED'>('ASSIGNED', 'UNASSIGNED', 'REVERSED'),
      at: fc.nat(4),
      amount: fc.constantFrom(50_000n, 70_000n),
      repeat: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(event, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (pages) => {
        const seen: unknown[] = [];
        const k = key('pg');
        for (const mode of ['one at a time', 'page'] as const) {
          const co = `co-${randomUUID()}`;
          const ids = [0, 1, 2, 3].map(() => newDepositId());
          let last: ReceivedEvent | undefined;
          const toEvent = (e: (typeof pages)[number][number], i: number): ReceivedEvent => {
            if (e.repeat && last) return last;
            const id = ids[e.deposit]!;
            const assigned = e.status !== 'UNASSIGNED';
            const deposit: depositV1.Deposit = {
              id,
              status: e.status,
              amountCents: e.amount,
              feeAmountCents: assigned ? 500n : 0n,
              ivaAmountCents: assigned ? 95n : 0n,
              netAmountCents: e.amount - (assigned ? 595n : 0n),
              currency: 'COP',
              source: 'BREB',
              brebKey: k,
              payerName: 'Luis Gómez',
              payerDocument: 'CC 79111222',
              payerBank: 'Nequi',
              providerTransferId: `tr-${id}`,
              providerConfirmedAt: new Date(t0),
              createdAt: new Date(t0),
            };
            const eventId = `${mode}-${i}-${randomUUID()}`;
            last = {
              id: eventId,
              subject: e.status === 'ASSIGNED' ? 'deposit.paid' : e.status === 'REVERSED' ? 'deposit.reversed' : 'deposit.unassigned',
              payload: depositEventsV1.DepositEvent.toJSON({ eventId, companyId: co, deposit, occurredAt: new Date(t0 + e.at * 1000) }),
              time: undefined,
              traceparent: undefined,
              redelivered: false,
              stream: 'DEPOSITS',
              streamSeq: i + 1,
            };
            return last;
          };
          let n = 0;
          for (const evts of pages) {
            const batch = evts.map((e) => toEvent(e, n++));
            await h.deposit.db.preparedTx(async (tx) => {
              if (mode === 'page') return page(batch, tx);
              for (const evt of batch) await one(evt, tx);
            });
          }
          const rows = await h.deposit.db.prepared<Record<string, unknown>>(
            `select id, status, amount::text, net_amount::text, breb_event_at, breb_key_id, created_at,
               (select count(*)::int from pse_deposit.state_history s where s.deposit_id = d.id) as changes
             from pse_deposit.deposits d where company_id = $1`,
            [co],
          );
          seen.push(rows.map((r) => ({ ...r, id: ids.indexOf(r.id as string) })).sort((a, b) => a.id - b.id));
        }
        expect(seen[1]).toEqual(seen[0]);
      }),
      { numRuns: 40 },
    );
  });
});
