import { bogotaDateOf } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * The reconciliation (docs/reconciliation.md) end to end, with nothing stood in: the real gateway, the real reconciliation service
 * (stack option `reconciliation: true`), transfer, ledger and the sandbox's settlement reports. An
 * operator starts a Bre-B run of today over HTTP, follows it at `Location` until it is RECONCILED,
 * reads the break a report discrepancy caused, finds it among the money exceptions, re-runs it while
 * the provider still reports it (409 BREAK_STILL_PRESENT), then after the provider corrects its
 * report (the discrepancy removed) re-runs it again: RESOLVED. Every answer is checked against
 * GET /openapi.json (stack.http), and the money invariants hold at the end.
 */
describe('reconciliation through the gateway (real service, sandbox reports)', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  const today = bogotaDateOf(new Date());

  const sendBreb = async (amount: number, reference: string) => {
    const key = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3001112233' } });
    expect(key.status).toBe(200);
    const sent = await stack.http('POST', '/transfers/send', {
      token: co.writeKey,
      body: {
        amount,
        reference,
        destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
        targetName: key.body.recipient.fullName,
        targetDocument: key.body.recipient.idValue,
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
    return sent.body.id as string;
  };
  const discrepancy = async (body: Record<string, unknown>) => {
    const res = await fetch(`${stack.sandbox!.url}/sandbox/reports/breb/${today}/discrepancies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const runToEnd = async (location: string) =>
    eventually(
      async () => {
        const r = await stack.admin('GET', location);
        expect(r.status).toBe(200);
        return r.body.status === 'RUNNING' ? undefined : r.body;
      },
      30_000,
      200,
    );

  beforeAll(async () => {
    stack = await startStack({ reconciliation: true });
    co = await stack.provision('Conciliación Extremo a Extremo S.A.S.', { wallets: ['BREB', 'ACH'] });
    expect((await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 })).status).toBe(200);
    expect(
      (await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 10_000_000, reference: 'seed-recon-e2e' })).status,
    ).toBeLessThan(300);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    expect((await stack.invariants()).violations).toEqual([]);
  });

  it('starts a run over HTTP, follows it to RECONCILED, shows the break, and resolves it by re-running once the provider corrects its report', async () => {
    const ok = await sendBreb(125_000, 'recon-e2e-1');
    const off = await sendBreb(80_000, 'recon-e2e-2');
    // The provider's report says the second payout was for more than we sent.
    const injected = await discrepancy({ kind: 'amount', ref: off, amountCents: 95_000 });

    expect((await stack.admin('POST', '/admin/reconciliations', { rail: 'breb', date: bogotaDateOf(new Date(Date.now() + 2 * 86_400_000)) })).status).toBe(422);
    const started = await stack.admin('POST', '/admin/reconciliations', { rail: 'breb', date: today });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ rail: 'breb', date: today, trigger: 'ON_DEMAND', requestedBy: 'admin' });
    const location = started.headers.get('location')!;
    expect(location).toBe(`/admin/reconciliations/${started.body.id}`);
    const run = await runToEnd(location);
    expect(run).toMatchObject({ status: 'RECONCILED', rejectReason: null, breaks: { total: 1, opened: 1, byKind: { amount_mismatch: 1 } } });
    expect(run.ours.count).toBeGreaterThanOrEqual(2);
    expect(run.matched.count).toBe(run.ours.count - 1);

    const listed = await stack.admin('GET', `/admin/reconciliations?rail=breb&date=${today}&status=RECONCILED`);
    expect(listed.body.items.map((r: { id: string }) => r.id)).toContain(run.id);

    const breaks = await stack.admin('GET', `${location}/breaks`);
    expect(breaks.status).toBe(200);
    expect(breaks.body.items).toHaveLength(1);
    const brk = breaks.body.items[0];
    expect(brk).toMatchObject({
      kind: 'amount_mismatch',
      rail: 'breb',
      date: today,
      ourId: off,
      status: 'OPEN',
      runId: run.id,
      exceptionId: expect.stringMatching(/^exc_[0-9a-f]{32}$/),
    });
    expect(BigInt(brk.differenceCents)).not.toBe(0n);
    expect(JSON.stringify(brk)).not.toContain(ok);

    const exc = await stack.admin('GET', '/admin/exceptions?kind=AMOUNT_MISMATCH&status=OPEN');
    expect(exc.body.items.find((e: { id: string }) => e.id === brk.exceptionId)).toMatchObject({
      kind: 'AMOUNT_MISMATCH',
      rail: 'BREB',
      resourceId: brk.key,
      companyId: co.id,
      actions: ['accept_provider', 'explain', 'rerun'],
    });

    // Still in the report: the re-run finds it again.
    const still = await stack.admin('POST', `/admin/exceptions/${brk.exceptionId}/resolve`, {
      action: 'rerun',
      note: 'El proveedor dice que corrigió el reporte.',
    });
    expect([still.status, still.body.error]).toEqual([409, 'BREAK_STILL_PRESENT']);
    expect((await stack.admin('GET', '/admin/exceptions?kind=AMOUNT_MISMATCH&status=OPEN')).body.items.map((e: { id: string }) => e.id)).toContain(
      brk.exceptionId,
    );

    // The provider corrects its report; the re-run no longer finds it.
    const removed = await fetch(`${stack.sandbox!.url}/sandbox/reports/breb/${today}/discrepancies/${encodeURIComponent(injected)}`, { method: 'DELETE' });
    expect(removed.status).toBeLessThan(300);
    const resolved = await stack.admin('POST', `/admin/exceptions/${brk.exceptionId}/resolve`, { action: 'rerun', note: 'El proveedor corrigió el reporte.' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: brk.exceptionId, status: 'RESOLVED', action: 'rerun' });
    const after = await stack.admin('GET', `${location}/breaks?status=RESOLVED`);
    expect(after.body.items).toEqual([expect.objectContaining({ key: brk.key, status: 'RESOLVED', resolution: 'rerun' })]);
  }, 120_000);
});
