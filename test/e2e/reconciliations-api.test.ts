import { randomUUID } from 'node:crypto';
import { ERRORS, signPayload, formatInstant } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';
import { fetchDocumented } from '../support/openapi-check.js';
import type { ReconciliationDouble } from '../support/reconciliation-double.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * The operator's side of the reconciliation (docs/reconciliation.md "Operator guide") through the real gateway: /admin/reconciliations
 * and the reconciliation's money exceptions in /admin/exceptions. The reconciliation service is a
 * TEST DOUBLE here (support/reconciliation-double.ts: a real gRPC server over the mesh's mutual TLS,
 * state in memory), the rest is real (transfer, pse-deposit, ledger, sandbox). Every answer is checked
 * against GET /openapi.json (stack.http).
 */
describe('admin reconciliations (against a reconciliation test double)', () => {
  let stack: Stack;
  let recon: ReconciliationDouble;
  let writeKey: string;

  const todayBogota = () => new Date(Date.now() - 5 * 3_600_000).toISOString().slice(0, 10);
  const daysFromToday = (n: number) => new Date(Date.now() - 5 * 3_600_000 + n * 86_400_000).toISOString().slice(0, 10);
  const callsOf = (method: string) => recon.calls.filter((c) => c.method === method).length;
  const expectError = (r: { status: number; body: any; text: string }, status: number, code: keyof typeof ERRORS) => {
    expect([r.status, r.body?.error]).toEqual([status, code]);
    expect(typeof r.body.message).toBe('string');
    expect(r.text).not.toMatch(/127\.0\.0\.1|Error:|\bat .*:\d+:\d+|grpc|stack/i);
  };

  beforeAll(async () => {
    stack = await startStack({ transfers: true, deposits: true, reconciliation: 'double' });
    recon = stack.reconciliationDouble!;
    const co = await stack.provision('Conciliaciones Ñandú S.A.S.');
    writeKey = co.writeKey;
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
  });

  describe('POST /admin/reconciliations', () => {
    it('starts a run: 202, Location, RUNNING, requested by the caller; the same rail and day under way is that run; audited', async () => {
      const date = daysFromToday(-1);
      const r = await stack.admin('POST', '/admin/reconciliations', { rail: 'breb', date });
      expect(r.status).toBe(202);
      expect(r.body).toMatchObject({
        id: expect.stringMatching(/^run_[0-9a-f]{32}$/),
        rail: 'breb',
        date,
        trigger: 'ON_DEMAND',
        status: 'RUNNING',
        requestedBy: 'admin',
        finishedAt: null,
        rejectReason: null,
        detail: null,
        report: { lines: 0, amountCents: '0', feeCents: '0', netCents: '0' },
        ours: { count: 0, amountCents: '0', netCents: '0' },
        matched: { count: 0, amountCents: '0' },
        breaks: { total: 0, opened: 0, byKind: {} },
      });
      expect(r.headers.get('location')).toBe(`/admin/reconciliations/${r.body.id}`);
      expect(recon.calls.find((c) => c.method === 'startRun')).toMatchObject({
        req: { rail: 'breb', date, requestedBy: 'admin' },
        actor: expect.stringMatching(/^admin:/),
      });
      const again = await stack.admin('POST', '/admin/reconciliations', { rail: 'breb', date });
      expect([again.status, again.body.id]).toEqual([202, r.body.id]);
      const followed = await stack.admin('GET', r.headers.get('location')!);
      expect([followed.status, followed.body.id]).toEqual([200, r.body.id]);
      // Today is allowed (Bogotá's date).
      expect((await stack.admin('POST', '/admin/reconciliations', { rail: 'breb-inbound', date: todayBogota() })).status).toBe(202);
      const audit = await stack.admin('GET', '/admin/audit?action=adminStartReconciliation');
      expect(audit.status).toBe(200);
      expect(audit.body.items.length).toBeGreaterThanOrEqual(3);
      expect(audit.body.items[0]).toMatchObject({ action: 'adminStartReconciliation', method: 'POST' });
    });

    it('refuses bad input before calling the service: future date 422, unknown rail, wrong types, missing or extra fields, huge values, malformed JSON 400', async () => {
      const before = callsOf('startRun');
      const future = await stack.admin('POST', '/admin/reconciliations', { rail: 'ach', date: daysFromToday(2) });
      expectError(future, 422, 'VALIDATION_ERROR');
      expect(future.body.details.fields).toEqual([expect.objectContaining({ path: 'date' })]);
      for (const body of [
        { rail: 'swift', date: '2026-01-05' },
        { rail: 'BREB', date: '2026-01-05' },
        { rail: 1, date: '2026-01-05' },
        { rail: 'ach', date: 20260105 },
        { rail: 'ach' },
        { date: '2026-01-05' },
        {},
        { rail: 'ach', date: '2026-02-30' },
        { rail: 'ach', date: '05/01/2026' },
        { rail: 'ach', date: '2026-01-05', extra: true },
        { rail: 'ach', date: '9'.repeat(10_000) },
        { rail: 'a'.repeat(10_000), date: '2026-01-05' },
        [],
        'ach',
      ]) {
        expectError(await stack.admin('POST', '/admin/reconciliations', body), 400, 'INVALID_REQUEST');
      }
      const malformed = await stack.http('POST', '/admin/reconciliations', {
        token: stack.gateway.adminToken,
        headers: { 'content-type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      const raw = await fetchDocumented(`${stack.gateway.url}/admin/reconciliations`, {
        method: 'POST',
        body: '{"rail": "ach", "date": ',
        headers: { authorization: `Bearer ${stack.gateway.adminToken}`, 'content-type': 'application/json' },
      });
      expect(raw.status).toBe(400);
      expect(callsOf('startRun')).toBe(before);
    });
  });

  describe('runs and breaks', () => {
    let run: Awaited<ReturnType<ReconciliationDouble['seedRun']>>;
    beforeAll(() => {
      run = recon.seedRun('ach', '2026-11-20', [
        {
          kind: 'amount_mismatch',
          ourId: randomUUID(),
          providerId: 'ACH-77',
          ours: { amount: '100000', status: 'COMPLETED' },
          theirs: { amount: '150000', status: 'COMPLETED' },
          differenceCents: 50_000n,
          companyId: randomUUID(),
        },
        { kind: 'missing_in_our_books', providerId: 'ACH-78', ours: {}, theirs: { amount: '2500000', status: 'COMPLETED' }, differenceCents: 2_500_000n },
      ]);
    });

    it('GET /admin/reconciliations/{id}: every field of the run; unknown and malformed ids are 404 RECONCILIATION_NOT_FOUND', async () => {
      const r = await stack.admin('GET', `/admin/reconciliations/${run.id}`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        id: run.id,
        rail: 'ach',
        date: '2026-11-20',
        trigger: 'SCHEDULE',
        status: 'RECONCILED',
        requestedBy: 'scheduler',
        startedAt: formatInstant(run.startedAt!),
        finishedAt: formatInstant(run.finishedAt!),
        coversUntil: formatInstant(run.startedAt!),
        rejectReason: null,
        detail: null,
        report: { lines: 3, amountCents: '450000', feeCents: '1500', netCents: '450000' },
        ours: { count: 3, amountCents: '400000', netCents: '400000' },
        matched: { count: 2, amountCents: '300000' },
        breaks: { total: 2, opened: 2, byKind: { amount_mismatch: 1, missing_in_our_books: 1 } },
      });
      for (const id of [`run_${'0'.repeat(32)}`, 'run_x', 'not-a-run', `run_${'A'.repeat(32)}`]) {
        expectError(await stack.admin('GET', `/admin/reconciliations/${id}`), 404, 'RECONCILIATION_NOT_FOUND');
      }
    });

    it('GET /admin/reconciliations: filters passed to the service, newest first, pages with nextCursor; bad filters 400', async () => {
      const r = await stack.admin('GET', '/admin/reconciliations?rail=ach&date=2026-11-20&status=RECONCILED&limit=10');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ items: [expect.objectContaining({ id: run.id })], nextCursor: null });
      expect(recon.calls.filter((c) => c.method === 'listRuns').at(-1)!.req).toMatchObject({
        rail: 'ach',
        date: '2026-11-20',
        status: 'RECONCILED',
        limit: 10,
      });
      const first = await stack.admin('GET', '/admin/reconciliations?limit=1');
      expect(first.body.items).toHaveLength(1);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await stack.admin('GET', `/admin/reconciliations?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
      expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
      for (const q of [
        'rail=swift',
        'date=2026-13-01',
        'date=ayer',
        'status=DONE',
        'limit=0',
        'limit=101',
        'limit=abc',
        'other=1',
        `cursor=${'x'.repeat(301)}`,
      ]) {
        expectError(await stack.admin('GET', `/admin/reconciliations?${q}`), 400, 'INVALID_REQUEST');
      }
    });

    it('GET /admin/reconciliations/{id}/breaks: both sides and the difference as a string; kind and status filters; unknown run 404', async () => {
      const r = await stack.admin('GET', `/admin/reconciliations/${run.id}/breaks`);
      expect(r.status).toBe(200);
      expect(r.body.nextCursor).toBeNull();
      const [mismatch, missing] = r.body.items;
      const seeded = recon.breaks.filter((b) => b.runId === run.id);
      expect(mismatch).toEqual({
        key: seeded[0]!.key,
        kind: 'amount_mismatch',
        rail: 'ach',
        date: '2026-11-20',
        ourId: seeded[0]!.ourId,
        providerId: 'ACH-77',
        ours: { amount: '100000', status: 'COMPLETED' },
        theirs: { amount: '150000', status: 'COMPLETED' },
        status: 'OPEN',
        runId: run.id,
        lastSeenRunId: run.id,
        openedAt: formatInstant(seeded[0]!.openedAt!),
        resolvedAt: null,
        resolution: null,
        exceptionId: seeded[0]!.exceptionId,
        differenceCents: '50000',
        movement: `ach:our:${seeded[0]!.ourId}`,
        adjustmentState: null,
        linkedCase: null,
      });
      expect(missing).toMatchObject({ kind: 'missing_in_our_books', ourId: null, ours: {}, differenceCents: '2500000' });
      const filtered = await stack.admin('GET', `/admin/reconciliations/${run.id}/breaks?kind=missing_in_our_books&status=OPEN&limit=5`);
      expect(filtered.body.items.map((b: { kind: string }) => b.kind)).toEqual(['missing_in_our_books']);
      expectError(await stack.admin('GET', `/admin/reconciliations/run_${'1'.repeat(32)}/breaks`), 404, 'RECONCILIATION_NOT_FOUND');
      expectError(await stack.admin('GET', '/admin/reconciliations/nope/breaks'), 404, 'RECONCILIATION_NOT_FOUND');
      for (const q of ['kind=AMOUNT_MISMATCH', 'status=RESOLVING', 'limit=1000']) {
        expectError(await stack.admin('GET', `/admin/reconciliations/${run.id}/breaks?${q}`), 400, 'INVALID_REQUEST');
      }
    });
  });

  describe("the reconciliation's money exceptions in /admin/exceptions", () => {
    let transferExceptionId: string;
    let breaks: ReconciliationDouble['breaks'];

    beforeAll(async () => {
      // A real transfer exception: a completed BRE-B payout the rail later says failed.
      const co = await stack.provision('Excepciones Mixtas S.A.S.');
      expect((await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 1_000_000, reference: 'seed-breb' })).status).toBe(201);
      const key = await stack.http('POST', '/transfers/resolve-key', { token: co.writeKey, body: { keyValue: '3004445566' } });
      const sent = await stack.http('POST', '/transfers/send', {
        token: co.writeKey,
        body: {
          amount: 120_000,
          destination: { brebKey: { type: key.body.keyType, value: key.body.keyValue } },
          targetName: key.body.recipient.fullName,
          targetDocument: key.body.recipient.idValue,
        },
      });
      expect(sent.status).toBe(201);
      await eventually(
        async () => (await stack.http('GET', `/wallets/transactions/${sent.body.id}`, { token: co.readKey })).body.status === 'COMPLETED',
        15_000,
        100,
      );
      const raw = JSON.stringify({
        eventId: `evt-${randomUUID()}`,
        transactionId: sent.body.id,
        providerTransferId: 'brb-late',
        rail: 'BREB',
        status: 'FAILED',
        errorMessage: 'Rechazada',
        occurredAt: new Date().toISOString(),
      });
      const cb = await fetchDocumented(`${stack.gateway.url}/webhooks/rails/breb`, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload('dev-rail-callback-secret', raw, Math.floor(Date.now() / 1000)) },
      });
      expect(cb.status).toBe(200);
      transferExceptionId = await eventually(
        async () => {
          const r = await stack.admin('GET', '/admin/exceptions?status=OPEN&kind=RAIL_FAILED_AFTER_COMPLETION');
          return r.body.items.find((e: { resourceId: string }) => e.resourceId === sent.body.id)?.id as string | undefined;
        },
        10_000,
        100,
      );
      // Reconciliation breaks around it in time: one older, two newer.
      recon.seedRun(
        'pse',
        '2026-11-18',
        [
          {
            kind: 'status_mismatch',
            ourId: 'dep_1',
            providerId: 'PSE-1',
            ours: { status: 'ASSIGNED' },
            theirs: { status: 'FAILED' },
            differenceCents: 30_000n,
          },
        ],
        new Date(Date.now() - 3_600_000),
      );
      recon.seedRun(
        'breb-inbound',
        '2026-11-21',
        [
          {
            kind: 'duplicate',
            ourId: 'in_1',
            providerId: 'BRB-9',
            ours: { amount: '5000' },
            theirs: { lines: 2 },
            differenceCents: -5_000n,
            companyId: randomUUID(),
          },
          {
            kind: 'value_date_mismatch',
            ourId: 'in_2',
            providerId: 'BRB-10',
            ours: { date: '2026-11-20' },
            theirs: { date: '2026-11-21' },
            differenceCents: 0n,
          },
        ],
        new Date(Date.now() + 1_000),
      );
      breaks = recon.breaks;
    }, 60_000);

    it('merges three sources newest first, pages across them with one cursor, and a kind filter asks only its owner', async () => {
      const all = await stack.admin('GET', '/admin/exceptions?status=OPEN&limit=100');
      expect(all.status).toBe(200);
      const ids = all.body.items.map((e: { id: string }) => e.id);
      const dup = breaks.find((b) => b.kind === 'duplicate')!;
      const vdm = breaks.find((b) => b.kind === 'value_date_mismatch')!;
      const stm = breaks.find((b) => b.kind === 'status_mismatch')!;
      expect(ids.indexOf(vdm.exceptionId)).toBeLessThan(ids.indexOf(dup.exceptionId));
      expect(ids.indexOf(dup.exceptionId)).toBeLessThan(ids.indexOf(transferExceptionId));
      expect(ids.indexOf(transferExceptionId)).toBeLessThan(ids.indexOf(stm.exceptionId));
      expect(all.body.items.find((e: { id: string }) => e.id === dup.exceptionId)).toMatchObject({
        kind: 'DUPLICATE',
        status: 'OPEN',
        rail: 'BREB',
        resourceId: dup.key,
        actions: ['accept_provider', 'explain', 'rerun'],
        ours: { amount: '5000' },
        theirs: { lines: 2 },
      });
      expect(all.body.items.find((e: { id: string }) => e.id === stm.exceptionId)).toMatchObject({ rail: 'PSE', companyId: '' });
      // One by one: the same items in the same order, none twice.
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await stack.admin('GET', `/admin/exceptions?status=OPEN&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((e: { id: string }) => e.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(ids);
      // A reconciliation kind asks the reconciliation only; a transfer kind does not ask it.
      const before = callsOf('listExceptions');
      const dups = await stack.admin('GET', '/admin/exceptions?kind=DUPLICATE');
      expect(dups.body.items.map((e: { id: string }) => e.id)).toEqual([dup.exceptionId]);
      expect(callsOf('listExceptions')).toBe(before + 1);
      expect(recon.calls.filter((c) => c.method === 'listExceptions').at(-1)!.req).toMatchObject({ kind: 'DUPLICATE' });
      expect((await stack.admin('GET', '/admin/exceptions?kind=RAIL_FAILED_AFTER_COMPLETION')).body.items.map((e: { id: string }) => e.id)).toContain(
        transferExceptionId,
      );
      expect(callsOf('listExceptions')).toBe(before + 1);
      expectError(await stack.admin('GET', '/admin/exceptions?kind=duplicate'), 400, 'INVALID_REQUEST');
    });

    it('resolves at the reconciliation in one call: explain, accept_provider; rerun answers 409 BREAK_STILL_PRESENT (still OPEN) until the break is gone', async () => {
      const dup = breaks.find((b) => b.kind === 'duplicate')!;
      const before = callsOf('resolveException');
      const explained = await stack.admin('POST', `/admin/exceptions/${dup.exceptionId}/resolve`, {
        action: 'explain',
        note: 'El proveedor duplicó la línea; confirmado por soporte.',
      });
      expect(explained.status).toBe(200);
      expect(explained.body).toMatchObject({
        id: dup.exceptionId,
        status: 'RESOLVED',
        action: 'explain',
        resolvedBy: 'admin',
        note: 'El proveedor duplicó la línea; confirmado por soporte.',
      });
      expect(callsOf('resolveException')).toBe(before + 1);
      expectError(
        await stack.admin('POST', `/admin/exceptions/${dup.exceptionId}/resolve`, { action: 'explain', note: 'otra vez' }),
        409,
        'EXCEPTION_NOT_OPEN',
      );

      const stm = breaks.find((b) => b.kind === 'status_mismatch')!;
      recon.stillPresent.add(stm.key);
      const still = await stack.admin('POST', `/admin/exceptions/${stm.exceptionId}/resolve`, { action: 'rerun', note: 'El proveedor corrigió el reporte.' });
      expectError(still, 409, 'BREAK_STILL_PRESENT');
      expect((await stack.admin('GET', '/admin/exceptions?kind=STATUS_MISMATCH')).body.items[0]).toMatchObject({ id: stm.exceptionId, status: 'OPEN' });
      recon.stillPresent.delete(stm.key);
      const gone = await stack.admin('POST', `/admin/exceptions/${stm.exceptionId}/resolve`, { action: 'rerun', note: 'El proveedor corrigió el reporte.' });
      expect([gone.status, gone.body.status, gone.body.action]).toEqual([200, 'RESOLVED', 'rerun']);

      const vdm = breaks.find((b) => b.kind === 'value_date_mismatch')!;
      const accepted = await stack.admin('POST', `/admin/exceptions/${vdm.exceptionId}/resolve`, {
        action: 'accept_provider',
        note: 'Fecha valor del proveedor.',
      });
      expect([accepted.status, accepted.body.action]).toEqual([200, 'accept_provider']);
      const breaksOfRun = await stack.admin('GET', `/admin/reconciliations/${vdm.runId}/breaks?status=RESOLVED`);
      expect(breaksOfRun.body.items.map((b: { key: string; resolution: string }) => [b.key, b.resolution])).toContainEqual([vdm.key, 'accept_provider']);
    });

    it("other services' exceptions still resolve at their owner; a wrong action or an unknown id reaches every owner before its answer", async () => {
      // A reconciliation action on a transfer exception: the transfer service names the actions it admits.
      const wrong = await stack.admin('POST', `/admin/exceptions/${transferExceptionId}/resolve`, { action: 'explain', note: 'no aplica' });
      expectError(wrong, 400, 'INVALID_REQUEST');
      const before = callsOf('resolveException');
      const dismissed = await stack.admin('POST', `/admin/exceptions/${transferExceptionId}/resolve`, {
        action: 'dismiss',
        note: 'El riel se equivocó; la transferencia sí se completó.',
      });
      expect([dismissed.status, dismissed.body.status, dismissed.body.action]).toEqual([200, 'RESOLVED', 'dismiss']);
      expect(callsOf('resolveException')).toBe(before);
      // A transfer action on a reconciliation exception: the reconciliation answers (asked last).
      const open = recon.seedRun('ach', '2026-11-19', [
        { kind: 'missing_at_provider', ourId: randomUUID(), ours: { amount: '1000' }, theirs: {}, differenceCents: -1000n },
      ]);
      const exc = recon.breaks.find((b) => b.runId === open.id)!.exceptionId;
      expectError(await stack.admin('POST', `/admin/exceptions/${exc}/resolve`, { action: 'write_off', note: 'x' }), 400, 'INVALID_REQUEST');
      expectError(await stack.admin('POST', `/admin/exceptions/exc_${'0'.repeat(32)}/resolve`, { action: 'rerun', note: 'x' }), 404, 'EXCEPTION_NOT_FOUND');
      expectError(await stack.admin('POST', `/admin/exceptions/exc_${'0'.repeat(32)}/resolve`, { action: 'explain' }), 400, 'INVALID_REQUEST');
      expectError(await stack.admin('POST', `/admin/exceptions/${exc}/resolve`, { action: 'explain', note: 'x'.repeat(501) }), 400, 'INVALID_REQUEST');
      expect((await stack.admin('GET', '/admin/exceptions?kind=MISSING_AT_PROVIDER')).body.items[0]).toMatchObject({ id: exc, status: 'OPEN' });
    });
  });

  it('refuses callers who are not operators: no or a wrong token 401, an API key 403', async () => {
    const run = recon.runs[0]!;
    const calls = recon.calls.length;
    for (const [method, path, body] of [
      ['POST', '/admin/reconciliations', { rail: 'ach', date: '2026-11-20' }],
      ['GET', '/admin/reconciliations', undefined],
      ['GET', `/admin/reconciliations/${run.id}`, undefined],
      ['GET', `/admin/reconciliations/${run.id}/breaks`, undefined],
    ] as const) {
      expect((await stack.http(method, path, { body })).status).toBe(401);
      expect((await stack.http(method, path, { body, token: 'not-the-admin-token' })).status).toBe(401);
      expectError(await stack.http(method, path, { body, token: writeKey }), 403, 'API_KEY_AUTH_NOT_ALLOWED');
    }
    expect(recon.calls.length).toBe(calls);
  });

  it('while the reconciliation service is down its routes answer 503 SERVICE_UNAVAILABLE, without internals', async () => {
    await recon.stop();
    expectError(await stack.admin('GET', '/admin/reconciliations'), 503, 'SERVICE_UNAVAILABLE');
    expectError(await stack.admin('POST', '/admin/reconciliations', { rail: 'ach', date: '2026-11-20' }), 503, 'SERVICE_UNAVAILABLE');
  });
});
