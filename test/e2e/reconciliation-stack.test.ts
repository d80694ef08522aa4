import { bogotaDateOf } from '@wallet/platform';
import { eventually, meshClient } from '@wallet/platform/testing';
import { reconciliationV1 } from '@wallet/proto';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * The reconciliation as the stack wires it (test/support/stack.ts, `reconciliation: true`): its own
 * mesh identity, the addresses of transfer, pse-deposit, collect-key and the ledger, the sandbox's
 * reports, no schedule. A Bre-B send completes, then an operator's on-demand run of today (the
 * gateway's identity, admin caller context) downloads the sandbox's report and reads transfer's
 * settled records over the mesh: the send is matched, nothing breaks.
 */
describe('reconciliation in the end-to-end stack', () => {
  let stack: Stack;
  let client: ReturnType<typeof meshClient<reconciliationV1.ReconciliationServiceServer>>;

  beforeAll(async () => {
    stack = await startStack({ reconciliation: true });
    client = meshClient<reconciliationV1.ReconciliationServiceServer>(
      reconciliationV1.ReconciliationServiceClient,
      stack.reconciliation!.address,
      'gateway',
      'reconciliation',
      30_000,
      new Set(['startRun', 'getRun', 'listRuns', 'listBreaks', 'listExceptions', 'resolveException']),
    );
  }, 120_000);
  afterAll(async () => {
    client?.close();
    await stack?.stop();
  });

  it('starts the service with the stack and reconciles a day of Bre-B sends against the sandbox report', async () => {
    const co = await stack.provision('Conciliación S.A.S.', { wallets: ['BREB', 'ACH'] });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    expect(
      (await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 5_000_000, reference: 'seed-recon' })).status,
    ).toBeLessThan(300);
    const key = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3001112233' } });
    expect(key.status).toBe(200);
    const sent = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount: 125_000,
        destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
        targetName: key.body.recipient.fullName,
        targetDocument: key.body.recipient.idValue,
        reference: 'recon-1',
      },
    });
    expect(sent.status).toBe(201);
    const done = await eventually(
      async () => {
        const r = await stack.http('GET', `/wallets/transactions/${sent.body.id}`, { token: co.readKey });
        return ['COMPLETED', 'FAILED'].includes(r.body?.status) ? r.body : undefined;
      },
      20_000,
      100,
    );
    expect(done.status).toBe('COMPLETED');

    const date = bogotaDateOf(new Date());
    const started = await client.startRun({ rail: 'breb', date, requestedBy: 'operator:e2e' }, { requestId: 'e2e-recon-start' });
    expect(started.run).toMatchObject({ rail: 'breb', date, trigger: 'ON_DEMAND', requestedBy: 'operator:e2e' });
    const run = await eventually(
      async () => {
        const r = await client.getRun({ id: started.run!.id }, { requestId: 'e2e-recon-get' });
        return r.status === 'RUNNING' ? undefined : r;
      },
      30_000,
      200,
    );
    expect([run.status, run.detail, run.rejectReason]).toEqual(['RECONCILED', undefined, undefined]);
    // Our send is on the sandbox's report and in transfer's records of the day, and they match.
    expect(Number(run.reportLines)).toBeGreaterThanOrEqual(1);
    expect(Number(run.oursCount)).toBeGreaterThanOrEqual(1);
    expect(run.matchedCount).toBe(run.oursCount);
    expect(run.breaksTotal).toBe(run.breaksOpened);
    expect(Number(run.breaksTotal)).toBe(0);
    expect(run.reportNetCents).toBe(run.oursNetCents);
    expect((await stack.invariants()).violations).toEqual([]);
  }, 90_000);

  it('reconciles a day of inbound Bre-B payments: credited, held and assigned, held and returned to the payer (its RETURNED line is its second leg)', async () => {
    const co = await stack.provision('Recaudos Conciliados S.A.S.', { wallets: ['BREB', 'ACH'] });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    const key = await stack.http('POST', '/breb/collect-keys', { token: co.writeKey, body: { externalId: 'recon-in', name: 'Tienda Conciliada' } });
    expect(key.status).toBe(201);
    const pay = async (amountCents: number) => {
      const r = await fetch(`${stack.sandbox!.url}/sandbox/breb/incoming`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ keyValue: key.body.key.value, amountCents, payerName: 'Pedro Pérez', payerDocument: 'CC 79123456', payerBank: 'Nequi' }),
      });
      return ((await r.json()) as { providerTransferId: string }).providerTransferId;
    };
    const deposit = async (transfer: string, status: string) =>
      eventually(
        async () => {
          const r = await stack.http('GET', '/deposits?rail=BREB', { token: co.readKey });
          return (r.body.deposits ?? []).find((d: any) => d.providerTransferId === transfer && d.status === status);
        },
        15_000,
        100,
      );
    await deposit(await pay(70_000), 'ASSIGNED');
    expect((await stack.http('DELETE', `/breb/collect-keys/${key.body.id}`, { token: co.writeKey })).status).toBe(200);
    const toAssign = await deposit(await pay(20_000), 'UNASSIGNED');
    const toReturn = await deposit(await pay(30_000), 'UNASSIGNED');
    expect((await stack.http('POST', `/deposits/${toAssign.id}/assign`, { token: co.writeKey, body: {} })).body.status).toBe('ASSIGNED');
    expect((await stack.http('POST', `/deposits/${toReturn.id}/return`, { token: co.writeKey, body: {} })).body.status).toBe('REVERSED');

    const date = bogotaDateOf(new Date());
    const started = await client.startRun({ rail: 'breb-inbound', date, requestedBy: 'operator:e2e' }, { requestId: 'e2e-recon-in' });
    const run = await eventually(
      async () => {
        const r = await client.getRun({ id: started.run!.id }, { requestId: 'e2e-recon-in-get' });
        return r.status === 'RUNNING' ? undefined : r;
      },
      30_000,
      200,
    );
    expect([run.status, run.detail, run.rejectReason]).toEqual(['RECONCILED', undefined, undefined]);
    expect(Number(run.reportLines)).toBeGreaterThanOrEqual(4); // three payments and one return
    const breaks = await client.listBreaks({ runId: run.id, limit: 50 } as never, { requestId: 'e2e-recon-in-breaks' }).catch((e: Error) => e.message);
    expect([run.matchedCount, Number(run.breaksTotal), JSON.stringify(breaks, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))]).toEqual([
      run.oursCount,
      0,
      JSON.stringify({ items: [] }),
    ]);
    expect(run.reportNetCents).toBe(run.oursNetCents);
  }, 90_000);
});
