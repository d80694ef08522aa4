import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * A payment nobody books (docs/decisions.md "Inbound Bre-B payments", "No key without a BREB wallet", "A definite ledger refusal"), through the gateway: a company created with only an ACH wallet cannot get a
 * collect key (404 FAST_WALLET_MISSING, in Spanish); a payment to a key whose company has no BREB
 * wallet (one issued before that check) is acknowledged to the network, parked CREDIT_REFUSED and
 * listed by GET /admin/exceptions with transfer's, pse-deposit's and the reconciliation's; an
 * operator resolves it through POST /admin/exceptions/{id}/resolve.
 */
describe('collect keys: a payment nobody could book', () => {
  let stack: Stack;
  let db: pg.Client;
  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, collectKeys: true });
    db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it("ACH-only company: no key (404 FAST_WALLET_MISSING); a legacy key's payment → CREDIT_REFUSED exception in /admin/exceptions, acknowledged, resolvable", async () => {
    const co = await stack.provision('Solo ACH S.A.S.', { wallets: ['ACH'] });
    const refused = await stack.http('POST', '/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cli-1', name: 'Tienda Uno' } });
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ error: 'FAST_WALLET_MISSING', message: expect.stringMatching(/billetera BREB/) });
    expect((await db.query(`select 1 from collect_key.keys where company_id = $1`, [co.id])).rowCount).toBe(0);

    // A key of this company from before the check: stored and registered at the directory as the service would have.
    const keyValue = `@legado${randomBytes(4).toString('hex')}`;
    const reg = await fetch(`${stack.sandbox!.url}/breb/directory/registrations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        keyValue,
        keyType: 'ALPHANUM',
        holderName: 'Tienda Legado',
        participantCallbackUrl: `${stack.gateway.url}/webhooks/breb/incoming`,
      }),
    });
    expect(reg.status).toBe(201);
    await db.query(
      `insert into collect_key.keys (id, company_id, external_id, name, key_type, key_value, state, iva_applicable)
      values ($1, $2, 'legado', 'Tienda Legado', 'ALPHANUM', $3, 'ACTIVE', false)`,
      [`bkey_${randomBytes(12).toString('hex')}`, co.id, keyValue],
    );

    const pay = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keyValue, amountCents: 80_000, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' }),
    });
    expect(pay.status).toBe(202);
    const { providerTransferId } = (await pay.json()) as { providerTransferId: string };
    const row = await eventually(
      async () => {
        const r = await db.query<{ deposit_id: string; status: string }>(
          `select deposit_id, status from collect_key.payments where provider_transfer_id = $1`,
          [providerTransferId],
        );
        return r.rows[0]?.status === 'CREDIT_REFUSED' ? r.rows[0] : undefined;
      },
      15_000,
      100,
    );
    // The network's delivery was acknowledged: nothing is left for it to retry.
    const delivery = await eventually(
      async () => {
        const r = await db.query<{ state: string; last_status: number }>(`select state, last_status from sandbox.callbacks where transaction_id = $1`, [
          providerTransferId,
        ]);
        return r.rows[0]?.state === 'delivered' ? r.rows[0] : undefined;
      },
      15_000,
      100,
    );
    expect(delivery.last_status).toBe(200);

    const listed = await stack.admin('GET', '/admin/exceptions?status=OPEN&kind=CREDIT_REFUSED');
    expect(listed.status).toBe(200);
    const exc = listed.body.items.find((e: { resourceId: string }) => e.resourceId === row.deposit_id);
    expect(exc).toMatchObject({
      id: expect.stringMatching(/^exc_[0-9a-f]{32}$/),
      kind: 'CREDIT_REFUSED',
      status: 'OPEN',
      rail: 'BREB',
      companyId: co.id,
      theirs: { source: 'ledger', code: 'FAST_WALLET_MISSING' },
      actions: ['retry', 'return', 'dismiss'],
    });

    expect((await stack.admin('GET', '/admin/exceptions')).body.items.map((e: { id: string }) => e.id)).toContain(exc.id);
    expect((await stack.admin('GET', '/admin/exceptions?kind=PAID_AFTER_EXPIRY')).body.items.map((e: { id: string }) => e.id)).not.toContain(exc.id);

    // Resolved through the gateway (routed to collect-key, which keeps it); audited like every admin change.
    const note = 'La empresa no tendrá billetera BREB: el pago se devolvió por fuera.';
    const dismissed = await stack.admin('POST', `/admin/exceptions/${exc.id}/resolve`, { action: 'dismiss', note });
    expect(dismissed.status).toBe(200);
    expect(dismissed.body).toMatchObject({ id: exc.id, status: 'RESOLVED', action: 'dismiss', note, resolvedBy: 'admin' });
    const again = await stack.admin('POST', `/admin/exceptions/${exc.id}/resolve`, { action: 'dismiss', note });
    expect([again.status, again.body.error]).toEqual([409, 'EXCEPTION_NOT_OPEN']);
    expect((await db.query(`select status from collect_key.payments where deposit_id = $1`, [row.deposit_id])).rows[0]).toEqual({ status: 'CREDIT_REFUSED' });
    // Refused by the ledger and dismissed by an operator: booked nowhere, as its state and its exception say; nothing is off.
    expect((await stack.invariants()).violations).toEqual([]);
  });
});
