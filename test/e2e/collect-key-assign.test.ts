import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Assigning held funds (docs/decisions.md "Inbound Bre-B payments") through the gateway: a payment to a suspended key stays UNASSIGNED after the
 * key is re-activated; the company assigns it (POST /deposits/{id}/assign, WRITE, its own only),
 * an operator assigns another one (POST /admin/deposits/{id}/assign, audited); each is credited
 * once and the deposit listing follows (deposit.paid).
 */
describe('collect keys: the way out of unassigned funds', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ collectKeys: true });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });
  // ledger:check knows the way out of a hold (`collectkey:payment:<id>:assign|:returned`): nothing is off after each test.
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  const incoming = async (keyValue: string, amountCents: number) => {
    const r = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keyValue, amountCents, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' }),
    });
    expect(r.status).toBe(202);
    return ((await r.json()) as { providerTransferId: string }).providerTransferId;
  };

  it('the company assigns its UNASSIGNED payment (another company cannot); an operator assigns another, audited; credited once each', async () => {
    const co = await stack.provision('Asignaciones S.A.S.');
    const other = await stack.provision('Otra S.A.S.');
    const key = await stack.http('POST', '/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cli-1', name: 'Tienda Uno' } });
    expect(key.status).toBe(201);
    expect((await stack.admin('PATCH', `/admin/collect-keys/${key.body.id}`, { state: 'SUSPENDED' })).status).toBe(200);
    const transfer = await incoming(key.body.key.value, 50_000);
    const listed = async (status: string) =>
      eventually(
        async () => {
          const r = await stack.http('GET', '/deposits?rail=BREB', { token: co.readKey });
          return (r.body.deposits ?? []).find((d: any) => d.providerTransferId === transfer && d.status === status);
        },
        15_000,
        100,
      );
    const held = await listed('UNASSIGNED');
    expect((await stack.admin('PATCH', `/admin/collect-keys/${key.body.id}`, { state: 'ACTIVE' })).status).toBe(200);
    const balance = async () =>
      BigInt((await stack.http('GET', '/wallets/balance', { token: co.readKey })).body.wallets.find((w: any) => w.rail === 'BREB').availableCents);
    const before = await balance();

    const foreign = await stack.http('POST', `/deposits/${held.id}/assign`, { token: other.writeKey, body: {} });
    expect([foreign.status, foreign.body.error]).toEqual([404, 'DEPOSIT_NOT_FOUND']);
    expect((await stack.http('POST', `/deposits/${held.id}/assign`, { token: co.readKey, body: {} })).status).toBe(403);

    const assigned = await stack.http('POST', `/deposits/${held.id}/assign`, { token: co.writeKey, body: { keyId: key.body.id } });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toMatchObject({ id: held.id, status: 'ASSIGNED', source: 'BREB', amountCents: '50000', brebKey: { id: key.body.id } });
    const again = await stack.http('POST', `/deposits/${held.id}/assign`, { token: co.writeKey, body: {} });
    expect([again.status, again.body.status]).toEqual([200, 'ASSIGNED']);
    expect((await balance()) - before).toBe(BigInt(assigned.body.netAmountCents));
    await listed('ASSIGNED');

    // A payment to a deleted key, assigned by an operator (with a note), in the audit log.
    expect((await stack.http('DELETE', `/breb/collect-keys/${key.body.id}`, { token: co.writeKey })).status).toBe(200);
    const transfer2 = await incoming(key.body.key.value, 30_000);
    const held2 = await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?rail=BREB', { token: co.readKey });
        return (r.body.deposits ?? []).find((d: any) => d.providerTransferId === transfer2 && d.status === 'UNASSIGNED');
      },
      15_000,
      100,
    );
    const byAdmin = await stack.admin('POST', `/admin/deposits/${held2.id}/assign`, { note: 'El cliente confirmó que el pago es suyo.' });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body).toMatchObject({ id: held2.id, status: 'ASSIGNED', amountCents: '30000' });
    const audit = await stack.admin('GET', '/admin/audit?limit=100');
    expect(audit.text).toContain('adminAssignBrebDeposit');
    await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?rail=BREB', { token: co.readKey });
        return (r.body.deposits ?? []).find((d: any) => d.id === held2.id && d.status === 'ASSIGNED');
      },
      15_000,
      100,
    );
    expect((await balance()) - before).toBe(BigInt(assigned.body.netAmountCents) + BigInt(byAdmin.body.netAmountCents));
    // Not UNASSIGNED any more: an operator's second assignment answers the deposit as it is.
    expect((await stack.admin('POST', `/admin/deposits/${held2.id}/assign`, { note: 'otra vez' })).body.status).toBe('ASSIGNED');
  });

  it("the company returns a held payment to the payer (REVERSED in the listing, RETURNED in the network's report); an operator returns another; assignment and return exclude each other", async () => {
    const co = await stack.provision('Devoluciones S.A.S.');
    const key = await stack.http('POST', '/breb/collect-keys', { token: co.writeKey, body: { externalId: 'cli-dev', name: 'Tienda Devolución' } });
    expect((await stack.http('DELETE', `/breb/collect-keys/${key.body.id}`, { token: co.writeKey })).status).toBe(200);
    const heldDeposit = async (transfer: string) =>
      eventually(
        async () => {
          const r = await stack.http('GET', '/deposits?rail=BREB', { token: co.readKey });
          return (r.body.deposits ?? []).find((d: any) => d.providerTransferId === transfer && d.status === 'UNASSIGNED');
        },
        15_000,
        100,
      );
    const transfer = await incoming(key.body.key.value, 25_000);
    const held = await heldDeposit(transfer);
    const other = await stack.provision('Ajena S.A.S.');
    const foreign = await stack.http('POST', `/deposits/${held.id}/return`, { token: other.writeKey, body: {} });
    expect([foreign.status, foreign.body.error]).toEqual([404, 'DEPOSIT_NOT_FOUND']);

    const returned = await stack.http('POST', `/deposits/${held.id}/return`, { token: co.writeKey, body: {} });
    expect(returned.status).toBe(200);
    expect(returned.body).toMatchObject({ id: held.id, status: 'REVERSED', amountCents: '25000' });
    const assignAfter = await stack.http('POST', `/deposits/${held.id}/assign`, { token: co.writeKey, body: {} });
    expect([assignAfter.status, assignAfter.body.error]).toEqual([409, 'INVALID_STATE_TRANSITION']);
    await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?rail=BREB', { token: co.readKey });
        return (r.body.deposits ?? []).find((d: any) => d.id === held.id && d.status === 'REVERSED');
      },
      15_000,
      100,
    );
    const day = new Date(Date.now() - 5 * 3600_000).toISOString().slice(0, 10);
    const report = await fetch(`${stack.sandbox!.url}/sandbox/reports/breb-inbound/${day}.csv`).then((r) => r.text());
    expect(
      report
        .split('\r\n')
        .filter((l) => l.startsWith(`${transfer},`))
        .map((l) => l.split(',').slice(2, 6).join(',')),
    ).toEqual(['IN,25000,0,RECEIVED', 'OUT,25000,0,RETURNED']);

    const transfer2 = await incoming(key.body.key.value, 15_000);
    const held2 = await heldDeposit(transfer2);
    const byAdmin = await stack.admin('POST', `/admin/deposits/${held2.id}/return`, { note: 'El pagador pidió la devolución.' });
    expect([byAdmin.status, byAdmin.body.status]).toEqual([200, 'REVERSED']);
    await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits?rail=BREB', { token: co.readKey });
        return (r.body.deposits ?? []).find((d: any) => d.id === held2.id && d.status === 'REVERSED');
      },
      15_000,
      100,
    );
    expect((await stack.admin('GET', '/admin/audit?limit=100')).text).toContain('adminReturnBrebDeposit');
  });
});
