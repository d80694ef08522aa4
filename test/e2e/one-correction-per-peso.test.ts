import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { signPayload } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { bogotaDate, reconciliationDriver, type ReportRail as Rail } from '../support/reconciliation-driver.js';
import { startStack } from '../support/stack.js';
import { PSE_PAYER } from '../support/fixtures.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * One correction per external movement (docs/reconciliation.md "One case per external movement"): money where two subsystems touch the same movement, through
 * the product (gateway → services → sandbox providers → reconciliation → ledger), each scenario
 * checked by the cross-service invariants (ledger:check's corrections and clearing lines among them).
 * Every reconciliation here is a same-day run of today's report (later traffic
 * of the same day must not turn the clearing line red: a same-day run covers the day only up to `covers_until`).
 */
describe('one correction per peso: reconciliation, owners and the ledger on one movement', () => {
  let stack: Stack;
  let co: Awaited<ReturnType<Stack['provision']>>;
  let sql: pg.Client;
  let today: string;

  const post = (path: string, body: unknown, key = co.writeKey) => stack.http('POST', path, { token: key, body });
  const sandbox = (method: string, path: string, body?: unknown) => reconciliationDriver(stack).sandbox(method, path, body);
  const inject = (rail: Rail, date: string, body: Record<string, unknown>) => reconciliationDriver(stack).inject(rail, date, body);
  const reconcile = (rail: Rail, date: string) => reconciliationDriver(stack).reconcile(rail, date);
  async function breakOf(rail: Rail, ourId: string, kind: string) {
    const r = await stack.admin('GET', `/admin/reconciliations?rail=${rail}&date=${today}&limit=1`);
    const runId = r.body.items[0].id as string;
    const all = (await stack.admin('GET', `/admin/reconciliations/${runId}/breaks?limit=100`)).body.items as any[];
    return all.find((b) => b.ourId === ourId && b.kind === kind);
  }
  async function exceptionWhere(pred: (e: any) => boolean) {
    let cursor: string | null = null;
    do {
      const r = await stack.admin('GET', `/admin/exceptions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      const hit = (r.body.items as any[]).find(pred);
      if (hit) return hit;
      cursor = r.body.nextCursor;
    } while (cursor);
    return undefined;
  }
  const resolve = (id: string, action: string, note: string) => stack.admin('POST', `/admin/exceptions/${id}/resolve`, { action, note });
  const correctionsOf = async (movement: string) =>
    (
      await sql.query(`select kind, case_id, reverses_posting_id is not null as undoes from ledger.postings where corrects = $1 order by created_at, id`, [
        movement,
      ])
    ).rows;
  const balance = async (account: string) =>
    BigInt((await sql.query(`select coalesce(sum(amount), 0)::text as s from ledger.entries where account = $1`, [account])).rows[0].s);
  async function expectInvariants() {
    const report = await stack.invariants();
    expect(report.violations).toEqual([]);
    return report;
  }
  const resolvedKey = async () => {
    const r = await post('/transfers/resolve-key', { keyValue: '3001234567' });
    expect(r.status).toBe(200);
    return r.body;
  };
  async function brebSend(amount: number) {
    const k = await resolvedKey();
    const r = await post('/transfers/send', {
      amount,
      reference: `ocp-${randomUUID()}`,
      destination: { brebKey: { type: k.keyType, value: k.keyValue } },
      targetName: k.recipient.fullName,
      targetDocument: k.recipient.idValue,
    });
    expect(r.status).toBe(201);
    return r.body.id as string;
  }
  const txStatus = async (id: string) => (await stack.http('GET', `/wallets/transactions/${id}`, { token: co.readKey })).body?.status;

  beforeAll(async () => {
    // The Bre-B rail confirms after 4 s: time to deliver a contradicting callback first.
    stack = await startStack({
      transfers: true,
      deposits: true,
      collectKeys: true,
      reconciliation: true,
      sandboxEnv: { SANDBOX_BREB_CONFIRM_MS: '4000' },
    } as any);
    sql = new pg.Client({ connectionString: stack.databaseUrl });
    await sql.connect();
    co = await stack.provision('Un Peso Una Corrección S.A.S.', { taxRegime: 'COMMON' });
    await stack.admin('PATCH', `/admin/companies/${co.id}`, { rateLimitMultiplier: 1000 });
    await stack.admin('POST', `/admin/companies/${co.id}/wallets/BREB/credit`, { amountCents: 50_000_000, reference: 'seed-breb' });
    // Not across a Bogotá midnight: every run here is of today's report.
    const msToMidnight = (t: number) => 86_400_000 - ((t - 5 * 3600_000) % 86_400_000);
    if (msToMidnight(Date.now()) < 180_000) await new Promise((r) => setTimeout(r, msToMidnight(Date.now()) + 1_000));
    today = bogotaDate(Date.now());
  }, 120_000);
  afterAll(async () => {
    await sql?.end();
    await stack?.stop();
  });

  it("finding 1: a payout the rail made after we released it is corrected once, by the owner's write-off; the break is linked, not booked again", async () => {
    const id = await brebSend(77_700);
    // Our side fails it first (a signed FAILED callback), the rail then pays it: RAIL_COMPLETED_AFTER_RELEASE.
    const provider = await eventually(
      async () =>
        (await sql.query(`select provider_transfer_id from transfer.transfers where id = $1`, [id])).rows[0]?.provider_transfer_id as string | undefined,
      10_000,
      50,
    );
    const raw = JSON.stringify({
      eventId: `evt-${randomUUID()}`,
      transactionId: id,
      providerTransferId: provider,
      rail: 'BREB',
      status: 'FAILED',
      errorMessage: 'Rechazada',
      occurredAt: new Date().toISOString(),
    });
    const cb = await fetch(`${stack.gateway.url}/webhooks/rails/breb`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', 'x-provider-signature': signPayload('dev-rail-callback-secret', raw, Math.floor(Date.now() / 1000)) },
    });
    expect(cb.status).toBe(200);
    await eventually(async () => (await txStatus(id)) === 'FAILED', 10_000, 100);
    const owner = await eventually(
      () => exceptionWhere((e) => e.kind === 'RAIL_COMPLETED_AFTER_RELEASE' && e.resourceId === id && e.status === 'OPEN'),
      20_000,
      200,
    );

    // Today's Bre-B report has the line COMPLETED; our books FAILED: a status break of +77,700.
    const run = await reconcile('breb', today);
    expect(run.status).toBe('RECONCILED');
    const b = await breakOf('breb', id, 'status_mismatch');
    expect(b).toMatchObject({ status: 'OPEN', differenceCents: '77700' });
    const brk = await exceptionWhere((e) => e.resourceId === b.key);
    // One case: the owner's exception and the break's, shown together by their movement.
    const movement = `breb:our:${id}`;
    expect(owner.movement).toBe(movement);
    expect(brk.movement).toBe(movement);
    const together = await stack.admin('GET', `/admin/exceptions?movement=${encodeURIComponent(movement)}`);
    expect(together.status).toBe(200);
    expect(together.body.items.map((e: any) => e.id).sort()).toEqual([owner.id, brk.id].sort());
    expect((await stack.admin('GET', `/admin/exceptions?movement=${encodeURIComponent(`ach:our:${id}`)}`)).body.items).toEqual([]);
    expect((await stack.admin('GET', '/admin/exceptions?movement=nowhere')).status).toBe(400);
    await expectInvariants();

    // accept_provider waits for the owner's case: 409 with the reason, the exception OPEN again.
    const early = await resolve(brk.id, 'accept_provider', 'El proveedor sí pagó');
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ error: 'CASE_NOT_FINAL', details: { reason: 'open_exception', ownerExceptionId: owner.id } });
    expect((await exceptionWhere((e) => e.id === brk.id)).status).toBe('OPEN');

    const clearing = await balance('rail_clearing:BREB');
    expect((await resolve(owner.id, 'write_off', 'El riel pagó después de liberar: pérdida operativa')).status).toBe(200);
    expect(await balance('rail_clearing:BREB')).toBe(clearing + 77_700n);
    await expectInvariants();

    // The break's accept_provider now finds the movement corrected: linked to that case, nothing posted.
    const linked = await resolve(brk.id, 'accept_provider', 'El proveedor sí pagó');
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ status: 'RESOLVED', action: 'accept_provider' });
    expect(await balance('rail_clearing:BREB')).toBe(clearing + 77_700n);
    expect(await correctionsOf(`breb:our:${id}`)).toEqual([{ kind: 'correction', case_id: owner.id, undoes: false }]);
    expect((await stack.admin('GET', `/admin/reconciliations/${run.id}/breaks?limit=100`)).body.items.find((x: any) => x.key === b.key)).toMatchObject({
      status: 'RESOLVED',
      resolution: 'linked',
    });
    const report = await expectInvariants();
    expect(report.report.checks.find((c: any) => c.name === 'corrections')).toMatchObject({ total: 0 });

    // A same-day run covers the day only up to `covers_until`: more traffic the same day after today's run; the clearing line stays green.
    const later = await brebSend(12_300);
    await eventually(async () => (await txStatus(later)) === 'COMPLETED', 20_000, 200);
    await expectInvariants();
  }, 120_000);

  it('finding 2: a break is refreshed on every run; an accepted difference the provider corrects is undone and booked anew; gone, it is undone', async () => {
    const id = await brebSend(200_000);
    await eventually(async () => (await txStatus(id)) === 'COMPLETED', 20_000, 200);
    let dsc = await inject('breb', today, { kind: 'amount', ref: id, amountCents: 250_000 });
    expect((await reconcile('breb', today)).status).toBe('RECONCILED');
    expect(await breakOf('breb', id, 'amount_mismatch')).toMatchObject({ status: 'OPEN', differenceCents: '50000' });

    // The provider corrects its line to +10,000: the re-run refreshes the break and its exception.
    expect((await sandbox('DELETE', `/sandbox/reports/breb/${today}/discrepancies/${dsc}`)).status).toBe(200);
    dsc = await inject('breb', today, { kind: 'amount', ref: id, amountCents: 210_000 });
    expect((await reconcile('breb', today)).status).toBe('RECONCILED');
    const b = await breakOf('breb', id, 'amount_mismatch');
    expect(b).toMatchObject({ status: 'OPEN', differenceCents: '10000', theirs: expect.objectContaining({ amountCents: '210000' }) });
    const exc = await exceptionWhere((e) => e.resourceId === b.key);
    expect(exc.theirs).toMatchObject({ amountCents: '210000' });
    const clearing = await balance('rail_clearing:BREB');
    expect((await resolve(exc.id, 'accept_provider', 'El banco cobró 100 pesos más')).status).toBe(200);
    expect(await balance('rail_clearing:BREB')).toBe(clearing + 10_000n);
    await expectInvariants();

    // Corrected again (+30,000): the accepted break is OPEN again with the new difference, its 10,000 undone.
    expect((await sandbox('DELETE', `/sandbox/reports/breb/${today}/discrepancies/${dsc}`)).status).toBe(200);
    dsc = await inject('breb', today, { kind: 'amount', ref: id, amountCents: 230_000 });
    expect((await reconcile('breb', today)).status).toBe('RECONCILED');
    expect(await breakOf('breb', id, 'amount_mismatch')).toMatchObject({ status: 'OPEN', differenceCents: '30000' });
    expect(await balance('rail_clearing:BREB')).toBe(clearing);
    expect((await exceptionWhere((e) => e.id === exc.id)).status).toBe('OPEN');
    await expectInvariants();
    expect((await resolve(exc.id, 'accept_provider', 'Diferencia final del banco')).status).toBe(200);
    expect(await balance('rail_clearing:BREB')).toBe(clearing + 30_000n);

    // The provider drops the difference: the next run no longer finds the break and undoes the adjustment.
    expect((await sandbox('DELETE', `/sandbox/reports/breb/${today}/discrepancies/${dsc}`)).status).toBe(200);
    expect((await reconcile('breb', today)).status).toBe('RECONCILED');
    expect(await balance('rail_clearing:BREB')).toBe(clearing);
    expect((await correctionsOf(`breb:our:${id}`)).map((c: any) => c.undoes)).toEqual([false, true, false, true]);
    await expectInvariants();
  }, 120_000);

  it('finding 11: a PSE payment the ledger refused to credit (parked CREDITING) is not a settled payment; accept_provider waits for it', async () => {
    // A company with no ACH wallet: the ledger refuses the credit of its paid PSE link for good.
    const breb = await stack.provision('Sin Billetera ACH S.A.S.', { wallets: ['BREB'] });
    const link = await post(
      '/deposits/pse',
      {
        amountCents: 90_000,
        ...PSE_PAYER,
      },
      breb.writeKey,
    );
    expect(link.status).toBe(201);
    expect((await sandbox('POST', `/sandbox/pse/${link.body.id}/pay`, { outcome: 'APPROVED', payerBank: 'Bancolombia' })).status).toBe(200);
    await eventually(() => exceptionWhere((e) => e.kind === 'CREDIT_REFUSED' && e.resourceId === link.body.id), 20_000, 200);
    expect((await sql.query(`select status from pse_deposit.deposits where id = $1`, [link.body.id])).rows[0].status).toBe('CREDITING');

    expect((await reconcile('pse', today)).status).toBe('RECONCILED');
    // Not matched as a settled payment: the line meets a record still owed on our side.
    const b = await breakOf('pse', link.body.id, 'status_mismatch');
    expect(b).toMatchObject({ status: 'OPEN', differenceCents: '-90000' });
    const brk = await exceptionWhere((e) => e.resourceId === b.key);
    const r = await resolve(brk.id, 'accept_provider', 'El proveedor sí cobró');
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'CASE_NOT_FINAL', details: { reason: 'pending' } });
    expect(await correctionsOf(`pse:our:${link.body.id}:payment`)).toEqual([]);
    await expectInvariants();
  }, 120_000);
});
