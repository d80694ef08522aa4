import { randomBytes } from 'node:crypto';
import { eventually } from '@wallet/platform/testing';
import { startHarness, type Harness } from './harness.js';

/**
 * Attribution (docs/decisions.md "Inbound Bre-B payments"): a payment is attributed by the registration the network routed it to when it
 * was paid, never by whoever holds the value when the notification is processed. A delayed
 * notification for a payment to company A's key, deleted meanwhile, is A's (held UNASSIGNED) after
 * company B registers the same value; B gets only the payments routed to its own registration.
 */
describe('inbound payments: attribution by registration at payment time', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.sandboxPost('/sandbox/faults', { callbacks: 'up' }).catch(() => undefined);
    await h?.stop();
  });
  afterEach(async () => {
    await h.expectInvariants();
  });

  const payment = async (transfer: string) =>
    eventually(
      async () =>
        (
          await h.service.db.query<{ company_id: string; key_id: string; status: string }>(
            `select company_id, key_id, status from collect_key.payments where provider_transfer_id = ? and status in ('ASSIGNED', 'UNASSIGNED')`,
            [transfer],
          )
        )[0],
      15_000,
    );
  const pay = async (keyValue: string, amountCents: number) => {
    const r = await h.sandboxPost('/sandbox/breb/incoming', { keyValue, amountCents, payerName: 'Luis Díaz', payerDocument: 'CC 1030', payerBank: 'Nequi' });
    expect(r.status).toBe(202);
    return String(r.body.providerTransferId);
  };

  it("a delayed notification for A's deleted key stays A's (UNASSIGNED) after B registers the same value; B is credited only its own", async () => {
    const coA = await h.newCompany();
    const coB = await h.newCompany();
    const value = `@shared${randomBytes(4).toString('hex')}`;
    const a = (await h.client.createKey({ externalId: 'tienda', name: 'Tienda A', keyValue: value }, h.ctx(coA))).key!;
    const anchors = async () =>
      h.service.db.query<{ id: string; anchor_handle: string | null }>(
        `select id, anchor_handle from collect_key.keys where key_value = ? order by created_at`,
        [value],
      );
    expect((await anchors())[0]!.anchor_handle).toMatch(/^anh_[0-9a-f]{24}$/);

    // The payer pays A's key; the network's notification is held (callbacks down) while A deletes
    // the key and B registers the same value.
    await h.sandboxPost('/sandbox/faults', { callbacks: 'down' });
    const late = await pay(value, 45_000);
    await h.client.deleteKey({ id: a.id }, h.ctx(coA));
    const b = await h.client.createKey({ externalId: 'tienda', name: 'Tienda B', keyValue: value }, h.ctx(coB));
    expect(b).toMatchObject({ created: true, key: { state: 'ACTIVE', keyValue: value } });
    const [ra, rb] = await anchors();
    expect(rb!.anchor_handle).toMatch(/^anh_/);
    expect(rb!.anchor_handle).not.toBe(ra!.anchor_handle);
    const beforeB = await h.brebAvailable(coB);
    await h.sandboxPost('/sandbox/faults', { callbacks: 'up' });

    expect(await payment(late)).toEqual({ company_id: coA, key_id: a.id, status: 'UNASSIGNED' });
    expect(await h.brebAvailable(coB)).toBe(beforeB);
    const events = await h.service.db.query<{ subject: string; payload: Record<string, any> }>(
      `select subject, payload from collect_key.outbox where payload #>> '{deposit,providerTransferId}' = ? order by seq`,
      [late],
    );
    expect(events.map((e) => [e.subject, e.payload.companyId])).toEqual([['deposit.unassigned', coA]]);

    // A payment made now is routed to B's registration: B's.
    const now = await pay(value, 30_000);
    expect(await payment(now)).toEqual({ company_id: coB, key_id: b.key!.id, status: 'ASSIGNED' });
    expect((await h.brebAvailable(coB)) - beforeB).toBe(30_000n);
  });
});
