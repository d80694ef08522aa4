import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createLogger } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { JournalSealer, verifyJournal } from '../../src/app/journal.js';
import { JournalStore } from '../../src/persistence/journal.store.js';
import { InflowSource, MovementStatus, Rail, countRows, fee, sealJournal, expectLedgerConsistent, failure, startHarness, type Harness } from './harness.js';

/**
 * The tamper-evident journal (docs/journal.md) against the real database and the real gRPC
 * VerifyJournal: every kind of posting is sealed exactly once into one SHA-256 chain; an edit made
 * as a superuser would make it (any column of a posting or an entry, a journal row, a head) is
 * found, naming the first broken posting; a posting written around the ledger is named too.
 */
describe('the tamper-evident journal', () => {
  let h: Harness;
  let store: JournalStore;
  let co: string;
  const log = createLogger('journal-test', 'silent');
  const sealerAt = (now: () => Date) => new JournalSealer(store, { newId: randomUUID, now }, { intervalMs: 3_600_000 }, log);
  /**
   * Drains until a pass records heads. The harness's own ledger runs short transactions (relays, sweepers); one open
   * at the instant of a pass holds the day back (the fence), for that pass only.
   */
  const drainRecording = (sealer: JournalSealer) =>
    eventually(async () => {
      const out = await sealer.drain();
      return out.recorded.length > 0 ? out : undefined;
    }, 30_000);

  beforeAll(async () => {
    // the service's own sealer stays idle: the test seals when it chooses
    h = await startHarness({ journalSealIntervalMs: 3_600_000 });
    store = new JournalStore(h.ledger.db);
    co = h.newCompany();
    await h.api.open(co);
    // one posting of many kinds: credit, reserve + commit, reserve + release, an inflow and its
    // reversal, a move, a batch, a void
    await h.api.credit(co, { rail: Rail.BREB, amountCents: 100_000n });
    await h.api.credit(co, { rail: Rail.ACH, amountCents: 50_000n });
    const r1 = await h.api.reserve(co, { amount: 1_000n, movement: { id: randomUUID(), status: MovementStatus.PENDING } });
    await h.api.commit(co, r1.hold!.id);
    const r2 = await h.api.reserve(co, { amount: 2_000n, movement: { id: randomUUID(), status: MovementStatus.PENDING } });
    await h.api.release(co, r2.hold!.id);
    const inflowKey = `inflow-${randomUUID()}`;
    await h.api.inflow(co, {
      idempotencyKey: inflowKey,
      source: InflowSource.PSE,
      grossCents: 7_000n,
      fee: fee(100n, 0n, 19n),
      movement: { id: randomUUID(), status: MovementStatus.UNSPECIFIED },
    });
    await h.api.reverseInflow(co, { originalIdempotencyKey: inflowKey });
    await h.api.move(co, { amountCents: 3_000n });
    await h.client.voidReserve({ idempotencyKey: `void-${randomUUID()}`, rail: Rail.BREB }, h.ctx(co));
  });
  afterAll(async () => {
    await h?.stop();
  });

  const sealAll = () => sealJournal(h);

  async function tampered(breakSql: string, repairSql: string, params: unknown[] = []) {
    await h.ledger.db.query(breakSql, params);
    try {
      return await h.api.verifyJournal();
    } finally {
      await h.ledger.db.query(repairSql, params);
    }
  }

  const sealedOf = async (sql: string, params: unknown[] = []) => {
    const [r] = await h.ledger.db.query<{ seq: string; posting_id: string }>(
      `select j.seq::text as seq, j.posting_id::text as posting_id from ledger.journal j join ledger.postings p on p.id = j.posting_id where ${sql} order by j.seq limit 1`,
      params,
    );
    if (!r) throw new Error('no such sealed posting');
    return { seq: BigInt(r.seq), postingId: r.posting_id };
  };

  it('seals every committed posting exactly once; a fresh journal verifies from genesis', async () => {
    const postings = await countRows(h, 'select count(*) as n from ledger.postings');
    expect(await countRows(h, 'select count(*) as n from ledger.journal_queue')).toBe(postings);
    const before = await h.api.verifyJournal();
    expect(before).toMatchObject({ ok: true, verified: 0n, pending: BigInt(postings) });

    await sealAll();
    const r = await h.api.verifyJournal();
    expect(r).toMatchObject({ ok: true, verified: BigInt(postings), pending: 0n, broken: 0n, outsideJournal: [] });
    expect(r.firstBroken).toBeUndefined();
    expect(r.head!.seq).toBe(BigInt(postings));
    expect(r.head!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await countRows(h, 'select count(distinct posting_id) as n from ledger.journal')).toBe(postings);
    // every kind written here is sealed, the void (no entries) included
    const kinds = await h.ledger.db.query<{ kind: string }>(
      'select distinct p.kind from ledger.journal j join ledger.postings p on p.id = j.posting_id order by 1',
    );
    expect(kinds.map((k) => k.kind)).toEqual(expect.arrayContaining(['credit', 'reserve', 'commit', 'release', 'inflow', 'reversal', 'move', 'void']));
    await expectLedgerConsistent(h);
  });

  it('an entry whose amount a superuser edits: CONTENT_CHANGED at that posting, and nowhere else', async () => {
    await sealAll();
    const target = await sealedOf(`p.kind = 'commit'`);
    const r = await tampered(
      `update ledger.entries set amount = amount + 100 where posting_id = ?::uuid and seq = 1`,
      `update ledger.entries set amount = amount - 100 where posting_id = ?::uuid and seq = 1`,
      [target.postingId],
    );
    expect(r.ok).toBe(false);
    expect(r.firstBroken).toEqual({ seq: target.seq, postingId: target.postingId, reason: 'CONTENT_CHANGED' });
    expect(r.broken).toBe(1n);
    expect((await h.api.verifyJournal()).ok).toBe(true);
  });

  it('any column of a posting: its company, its instant, its kind', async () => {
    const target = await sealedOf(`p.kind = 'credit'`);
    for (const [col, value] of [
      ['company_id', `'${randomUUID()}'`],
      ['created_at', `created_at - interval '1 microsecond'`],
      ['idempotency_key', `idempotency_key || 'x'`],
    ] as const) {
      // a plain table of the test's database: each query may run on another of the pool's connections (a temporary table is one connection's)
      await h.ledger.db.query('create table if not exists public.journal_test_saved as select * from ledger.postings limit 0');
      await h.ledger.db.query('insert into public.journal_test_saved select * from ledger.postings where id = ?::uuid', [target.postingId]);
      await h.ledger.db.query(`update ledger.postings set ${col} = ${value} where id = ?::uuid`, [target.postingId]);
      try {
        const r = await h.api.verifyJournal();
        expect({ col, first: r.firstBroken }).toEqual({ col, first: { seq: target.seq, postingId: target.postingId, reason: 'CONTENT_CHANGED' } });
      } finally {
        await h.ledger.db.query(`update ledger.postings p set ${col} = s.${col} from public.journal_test_saved s where p.id = s.id`);
        await h.ledger.db.query('delete from public.journal_test_saved');
      }
    }
    expect((await h.api.verifyJournal()).ok).toBe(true);
  });

  it('an entry added to a sealed posting, or one removed', async () => {
    const target = await sealedOf(`p.kind = 'reserve'`);
    const added = await tampered(
      `insert into ledger.entries (posting_id, seq, account, amount) values (?::uuid, 99, 'funding', 1)`,
      `delete from ledger.entries where posting_id = ?::uuid and seq = 99`,
      [target.postingId],
    );
    expect(added.firstBroken).toMatchObject({ seq: target.seq, reason: 'CONTENT_CHANGED' });
  });

  it('a sealed posting deleted: POSTING_MISSING', async () => {
    const target = await sealedOf(`p.kind = 'release'`);
    await h.ledger.db.query('create table if not exists public.journal_test_saved_p as select * from ledger.postings limit 0');
    await h.ledger.db.query('insert into public.journal_test_saved_p select * from ledger.postings where id = ?::uuid', [target.postingId]);
    const r = await tampered(
      `delete from ledger.postings where id = ?::uuid`,
      `insert into ledger.postings select * from public.journal_test_saved_p where id = ?::uuid`,
      [target.postingId],
    );
    expect(r.firstBroken).toEqual({ seq: target.seq, postingId: target.postingId, reason: 'POSTING_MISSING' });
  });

  it('the journal itself edited: a link broken; a row deleted: a gap (and its posting outside the journal)', async () => {
    const target = await sealedOf(`p.kind = 'inflow'`);
    const linked = await tampered(
      `update ledger.journal set hash = sha256(hash) where seq = ?::bigint`,
      // sha256 is not invertible: the saved hash is put back
      `select 1`,
      [target.seq.toString()],
    );
    expect(linked.firstBroken).toEqual({ seq: target.seq, postingId: target.postingId, reason: 'LINK_BROKEN' });
    // repair: the hash as the chain makes it (the next row's link then holds again)
    const [prev] = await h.ledger.db.query<{ hash: string }>(`select encode(hash, 'hex') as hash from ledger.journal where seq = ?::bigint`, [
      (target.seq - 1n).toString(),
    ]);
    await h.ledger.db.query(`update ledger.journal set hash = sha256(decode(?, 'hex') || content_hash) where seq = ?::bigint`, [
      prev!.hash,
      target.seq.toString(),
    ]);
    expect((await h.api.verifyJournal()).ok).toBe(true);

    // the row kept here, not in a temporary table: the pool may run the repair on another connection
    const [saved] = await h.ledger.db.query<{ row: unknown }>('select to_jsonb(j) as row from ledger.journal j where seq = ?::bigint', [target.seq.toString()]);
    const gap = await tampered(
      `delete from ledger.journal where seq = ?::bigint and ?::jsonb is not null`,
      `with s as (select ?::bigint as seq) insert into ledger.journal select r.* from s, jsonb_populate_record(null::ledger.journal, ?::jsonb) r where r.seq = s.seq`,
      [target.seq.toString(), JSON.stringify(saved!.row)],
    );
    expect(gap.firstBroken).toEqual({ seq: target.seq, postingId: '', reason: 'SEQUENCE_GAP' });
    expect(gap.outsideJournal).toEqual([target.postingId]);
    expect((await h.api.verifyJournal()).ok).toBe(true);
  });

  it('a posting written around the ledger (by hand, never queued): OUTSIDE_JOURNAL, named', async () => {
    const id = randomUUID();
    const r = await tampered(
      `insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail) values (?::uuid, 'by-hand-' || ?::text, 'x', 'credit', 'nobody', 'BREB')`,
      `delete from ledger.postings where id = ?::uuid`,
      [id, id],
    );
    expect(r.ok).toBe(false);
    expect(r.outsideJournal).toEqual([id]);
    expect(r.firstBroken).toEqual({ seq: 0n, postingId: id, reason: 'OUTSIDE_JOURNAL' });
  });

  it('from a trusted head: its own position and hash must be on the chain', async () => {
    await sealAll();
    const [mid] = await h.ledger.db.query<{ seq: string; hash: string }>(
      `select j.seq::text as seq, encode(j.hash, 'hex') as hash from ledger.journal j order by j.seq offset 3 limit 1`,
    );
    const ok = await h.api.verifyJournal({ fromSeq: BigInt(mid!.seq), fromHash: mid!.hash });
    expect(ok).toMatchObject({ ok: true, from: { seq: BigInt(mid!.seq), hash: mid!.hash } });
    const total = await countRows(h, 'select count(*) as n from ledger.journal');
    expect(ok.verified).toBe(BigInt(total) - BigInt(mid!.seq));

    const forged = await h.api.verifyJournal({ fromSeq: BigInt(mid!.seq), fromHash: '0'.repeat(64) });
    expect(forged.ok).toBe(false);
    expect(forged.firstBroken).toMatchObject({ seq: BigInt(mid!.seq), reason: 'HEAD_MISMATCH' });

    const bad = await failure(h.api.verifyJournal({ fromSeq: 1n }));
    expect(bad.code).toBe('INVALID_REQUEST');
    const badHash = await failure(h.api.verifyJournal({ fromSeq: 1n, fromHash: 'XYZ' }));
    expect(badHash.code).toBe('INVALID_REQUEST');
  });

  it("records the closed Bogotá day's head once, with its event; verification checks it; an edited head fails", async () => {
    await sealAll();
    // a sealer whose clock reads tomorrow closes today (Bogotá)
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Bogota' }).format(new Date());
    const tomorrow = () => new Date(Date.now() + 86_400_000);
    // A transaction that began today and is still open may yet commit a posting dated today: no head while it runs.
    const other = new pg.Client({ connectionString: h.tdb.url });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select 1');
      expect((await sealerAt(tomorrow).drain()).recorded).toEqual([]);
      await other.query('commit');
    } finally {
      await other.end();
    }
    const first = await drainRecording(sealerAt(tomorrow));
    expect(first.recorded).toHaveLength(1);
    expect(first.recorded[0]).toMatchObject({ day: today, seq: first.head.seq, hash: first.head.hash });
    expect((await sealerAt(tomorrow).drain()).recorded).toEqual([]); // once
    const heads = await h.api.journalHeads(co, today, today);
    expect(heads.heads).toEqual([expect.objectContaining({ day: today, seq: first.head.seq, hash: first.head.hash })]);
    const [ev] = await h.ledger.db.query<{ payload: { day: string; seq: string; hash: string } }>(
      `select payload from ledger.outbox where subject = 'ledger.journal_head_recorded' and payload->>'day' = ?`,
      [today],
    );
    expect(ev!.payload).toMatchObject({ day: today, seq: first.head.seq.toString(), hash: first.head.hash });

    // (an earlier pass at the real clock recorded yesterday's head: every recorded head is checked)
    const recorded = await countRows(h, 'select count(*) as n from ledger.journal_heads');
    const v = await h.api.verifyJournal();
    expect(v).toMatchObject({ ok: true, headsChecked: BigInt(recorded) });
    expect(recorded).toBeGreaterThanOrEqual(1);
    const r = await tampered(`update ledger.journal_heads set hash = sha256(hash) where day = ?::date`, `select 1`, [today]);
    expect(r.firstBroken).toMatchObject({ seq: first.head.seq, reason: 'HEAD_MISMATCH' });
    await h.ledger.db.query(`update ledger.journal_heads set hash = decode(?, 'hex') where day = ?::date`, [first.head.hash, today]);
    expect((await h.api.verifyJournal()).ok).toBe(true);
    expect((await failure(h.api.journalHeads(co, '2026-13-01', today))).code).toBe('INVALID_REQUEST');
  });

  it('closes every day no pass closed (a ledger stopped across whole days), each once, oldest first', async () => {
    await sealAll();
    const [last] = await h.ledger.db.query<{ day: string }>(`select to_char(max(day), 'YYYY-MM-DD') as day from ledger.journal_heads`);
    const day = (d: string, n: number) => new Date(Date.parse(`${d}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
    // a sealer whose clock reads four days after the last recorded day: three days were never closed
    const later = () => new Date(Date.parse(`${day(last!.day, 4)}T17:00:00Z`));
    const out = await drainRecording(sealerAt(later));
    expect(out.recorded.map((r) => r.day)).toEqual([day(last!.day, 1), day(last!.day, 2), day(last!.day, 3)]);
    for (const r of out.recorded) expect(r).toMatchObject({ seq: out.head.seq, hash: out.head.hash });
    expect((await sealerAt(later).drain()).recorded).toEqual([]);
    const events = await countRows(h, `select count(*) as n from ledger.outbox where subject = 'ledger.journal_head_recorded' and payload->>'day' > ?`, [
      last!.day,
    ]);
    expect(events).toBe(3);
    expect(await h.api.verifyJournal()).toMatchObject({ ok: true });
  });

  it('postings written while two sealers race: each sealed once, in one unbroken chain', async () => {
    const before = await countRows(h, 'select count(*) as n from ledger.journal');
    const writes = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? h.api.credit(co, { rail: Rail.BREB, amountCents: BigInt(100 + i) })
        : h.api.reserve(co, { amount: 10n, movement: { id: randomUUID(), status: MovementStatus.PENDING } }),
    );
    const sealers = Array.from({ length: 4 }, () => sealerAt(() => new Date()).drain(7));
    await Promise.all([...writes, ...sealers]);
    await sealAll();
    expect(await countRows(h, 'select count(*) as n from ledger.journal')).toBe(before + 40);
    const r = await verifyJournal(store);
    expect(r).toMatchObject({ ok: true, broken: 0, pending: 0, outsideJournal: [] });
    await expectLedgerConsistent(h);
  });
});
