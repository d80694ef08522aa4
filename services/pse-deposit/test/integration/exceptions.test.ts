import { GrpcLedger } from '../../src/adapters/ledger.client.js';
import { failure, startHarness, type Harness } from './harness.js';
import { GRACE_SECONDS, buildRig, newDeposit, signedCallback, type Rig } from './rig.js';
import { devMeshTls } from '@wallet/platform';

/**
 * ListExceptions / ResolveException over the service's gRPC: the transfer service's semantics
 * exactly (services/transfer/src/app/exceptions.ts), so the gateway merges both lists with one
 * cursor. A database of its own, so the listing holds only this file's exceptions.
 */
describe('PSE money exceptions over gRPC', () => {
  let h: Harness;
  let ledger: GrpcLedger;
  let rig: Rig;
  const opened: Array<{ id: string; kind: string; depositId: string }> = [];

  beforeAll(async () => {
    h = await startHarness({ depositEnv: { SWEEPER_INTERVAL_MS: '3600000', PSE_PAID_GRACE_SECONDS: String(GRACE_SECONDS) } });
    ledger = new GrpcLedger(h.ledger.address, devMeshTls('pse-deposit'));
    rig = buildRig(h, { ledger });
    // Five exceptions: three late payments, two payments after a failure.
    const co = await h.newCompany();
    for (const kind of ['PAID_AFTER_EXPIRY', 'PAID_AFTER_FAILURE', 'PAID_AFTER_EXPIRY', 'PAID_AFTER_FAILURE', 'PAID_AFTER_EXPIRY']) {
      const d = await newDeposit(h, rig, co, kind === 'PAID_AFTER_EXPIRY' ? -600_000 : 600_000);
      if (kind === 'PAID_AFTER_FAILURE') await rig.uc.handlePseCallback.execute(signedCallback(d.id, { status: 'FAILED' }));
      const paidAt = kind === 'PAID_AFTER_EXPIRY' ? new Date(d.expiresAt!.getTime() + 3_600_000) : new Date();
      await rig.uc.handlePseCallback.execute(signedCallback(d.id, { status: 'PAID', paidAt }));
      const [row] = await h.deposit.db.query<{ id: string }>(`select id from pse_deposit.money_exceptions where resource_id = ?`, [d.id]);
      opened.push({ id: row!.id, kind, depositId: d.id });
    }
  }, 60_000);
  afterAll(async () => {
    ledger?.close();
    await h?.stop();
  });

  const list = (q: { status?: string; kind?: string; limit?: number; cursor?: string; id?: string }) => h.client.listExceptions({ limit: 0, ...q }, h.ctx());
  /** The cursor the transfer service would write for the same row: base64url("<opened_at µs UTC>|<id>"). */
  const cursorOf = async (id: string) => {
    const [r] = await h.deposit.db.query<{ c: string }>(
      `select to_char(opened_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|' || id as c from pse_deposit.money_exceptions where id = ?`,
      [id],
    );
    return Buffer.from(r!.c).toString('base64url');
  };

  it('lists newest first by (opened_at, id), pages with the shared cursor format, and filters by status and kind', async () => {
    const all = await list({});
    expect(all.items.map((e) => e.id)).toEqual(opened.map((o) => o.id).reverse());
    expect(all.nextCursor).toBeUndefined();
    expect(all.items[0]).toMatchObject({
      rail: 'PSE',
      status: 'OPEN',
      kind: 'PAID_AFTER_EXPIRY',
      resourceId: opened[4]!.depositId,
      actions: ['credit', 'dismiss'],
    });
    expect(JSON.parse(all.items[0]!.oursJson)).toMatchObject({ state: 'EXPIRED' });
    expect(JSON.parse(all.items[0]!.theirsJson)).toMatchObject({ status: 'PAID', source: 'callback' });

    const p1 = await list({ limit: 2 });
    expect(p1.items.map((e) => e.id)).toEqual([opened[4]!.id, opened[3]!.id]);
    expect(p1.nextCursor).toBe(await cursorOf(opened[3]!.id));
    expect(Buffer.from(p1.nextCursor!, 'base64url').toString()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z\|exc_[0-9a-f]{32}$/);
    const p2 = await list({ limit: 2, cursor: p1.nextCursor! });
    expect(p2.items.map((e) => e.id)).toEqual([opened[2]!.id, opened[1]!.id]);
    const p3 = await list({ limit: 2, cursor: p2.nextCursor! });
    expect(p3.items.map((e) => e.id)).toEqual([opened[0]!.id]);
    expect(p3.nextCursor).toBeUndefined();
    // A cursor means "strictly before that (opened_at, id)", whichever list it came from.
    expect((await list({ cursor: await cursorOf(opened[1]!.id) })).items.map((e) => e.id)).toEqual([opened[0]!.id]);

    expect((await list({ kind: 'PAID_AFTER_FAILURE' })).items.map((e) => e.id)).toEqual([opened[3]!.id, opened[1]!.id]);
    expect((await list({ status: 'RESOLVED' })).items).toEqual([]);
    expect((await list({ status: 'open' })).items).toHaveLength(5);
    for (const bad of [{ status: 'CLOSED' }, { kind: 'RAIL_COMPLETED_AFTER_RELEASE' }, { limit: 101 }, { cursor: 'bm90LWEtY3Vyc29y' }]) {
      const e = await failure(list(bad));
      expect({ bad, code: e.code }).toEqual({ bad, code: 'INVALID_REQUEST' });
    }
  });

  it("by id: that exception alone, with the other filters still applied; an unknown or malformed id (or another service's) is an empty page", async () => {
    const one = await list({ id: opened[2]!.id });
    expect(one.items.map((e) => e.id)).toEqual([opened[2]!.id]);
    expect(one.nextCursor).toBeUndefined();
    expect((await list({ id: opened[2]!.id, status: 'RESOLVED' })).items).toEqual([]);
    expect((await list({ id: `exc_${'0'.repeat(32)}` })).items).toEqual([]);
    expect((await list({ id: 'not-an-exception' })).items).toEqual([]);
  });

  it('resolve: EXCEPTION_NOT_FOUND for a malformed or unknown id; of two concurrent resolutions one wins, the other is EXCEPTION_NOT_OPEN', async () => {
    for (const id of ['exc_nope', `exc_${'0'.repeat(32)}`, 'dep_x']) {
      expect((await failure(h.client.resolveException({ id, action: 'dismiss', note: 'x', resolvedBy: 'ops' }, h.ctx()))).code).toBe('EXCEPTION_NOT_FOUND');
    }
    const target = opened[0]!; // PAID_AFTER_EXPIRY
    const results = await Promise.allSettled([
      h.client.resolveException({ id: target.id, action: 'credit', note: 'aceptado', resolvedBy: 'ops-1' }, h.ctx()),
      h.client.resolveException({ id: target.id, action: 'dismiss', note: 'devuelto', resolvedBy: 'ops-2' }, h.ctx()),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.map((r) => (r.reason as { code: string }).code)).toEqual(['EXCEPTION_NOT_OPEN']);
    const after = (await list({ status: 'RESOLVED' })).items;
    expect(after.map((e) => e.id)).toEqual([target.id]);
    const co = (await h.deposit.db.query<{ company_id: string }>(`select company_id from pse_deposit.deposits where id = ?`, [target.depositId]))[0]!
      .company_id;
    const credited = after[0]!.action === 'credit';
    expect(await h.achAvailable(co)).toBe(credited ? 98_810n : 0n);
    expect((await h.client.getDeposit({ id: target.depositId }, h.ctx(co))).status).toBe(credited ? 'ASSIGNED' : 'EXPIRED');
    await h.expectInvariants();
  });

  it('a resolution interrupted after it was won (RESOLVING) is resumed by the same action, and posts its credit once', async () => {
    const target = opened[1]!; // PAID_AFTER_FAILURE
    // As if the operator's call died after winning the exception, before the credit.
    await h.deposit.db.query(
      `update pse_deposit.money_exceptions set status = 'RESOLVING', action = 'credit', note = 'aceptado', resolved_by = 'ops' where id = ?`,
      [target.id],
    );
    expect((await failure(h.client.resolveException({ id: target.id, action: 'dismiss', note: 'x', resolvedBy: 'ops' }, h.ctx()))).code).toBe(
      'EXCEPTION_NOT_OPEN',
    );
    const done = await h.client.resolveException({ id: target.id, action: 'credit', note: 'aceptado', resolvedBy: 'ops' }, h.ctx());
    expect(done).toMatchObject({ status: 'RESOLVED', action: 'credit' });
    const again = await failure(h.client.resolveException({ id: target.id, action: 'credit', note: 'aceptado', resolvedBy: 'ops' }, h.ctx()));
    expect(again.code).toBe('EXCEPTION_NOT_OPEN');
    const [dep] = await h.deposit.db.query<{ status: string; company_id: string }>(`select status, company_id from pse_deposit.deposits where id = ?`, [
      target.depositId,
    ]);
    expect(dep!.status).toBe('ASSIGNED');
    const postings = await h.deposit.db.query(`select 1 from ledger.postings where idempotency_key = ?`, [`deposit:${target.depositId}:paid`]);
    expect(postings).toHaveLength(1);
    // deposit.failed, then (the operator's credit) deposit.paid.
    const subjects = (
      await h.deposit.db.query<{ subject: string }>(`select subject from pse_deposit.outbox where payload->'deposit'->>'id' = ? order by seq`, [
        target.depositId,
      ])
    ).map((r) => r.subject);
    expect(subjects).toEqual(['deposit.created', 'deposit.failed', 'deposit.paid']);
    await h.expectInvariants();
  });
});
