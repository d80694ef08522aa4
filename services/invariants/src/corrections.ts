import { Offenders, type CheckOptions, type CheckResult, type CheckSources } from './report.js';

/**
 * corrections (one correction per external movement, docs/reconciliation.md "One case per external movement"): every correcting entry of the journal (an
 * owner's write-off, `correction`; an accepted reconciliation break, `recon_adjustment`) names the
 * external movement it corrects and the case that asked for it; per movement, at most one is live
 * (corrections less the entries that undid them); an undoing entry undoes a correction of the same
 * movement, once; and the live register (ledger.corrections) says the same as the journal.
 * Always the whole installation (a correction of a clearing account belongs to no company).
 */
export async function checkCorrections(s: CheckSources, _o: CheckOptions, limit: number): Promise<CheckResult> {
  const bad = new Offenders(limit);
  const unnamed = await s.ledger.query<{ id: string; kind: string; key: string }>(
    `select p.id::text as id, p.kind, p.idempotency_key as key from ledger.postings p
      where p.kind in ('correction', 'recon_adjustment') and (p.corrects is null or p.corrects = '' or p.case_id is null or p.case_id = '')
      order by p.created_at, p.id`,
  );
  for (const p of unnamed) bad.add(`correcting entry ${p.id} (${p.kind}, key ${p.key}) names no movement or no case`);

  const movements = await s.ledger.query<{ movement: string; live: number; corrections: number; cases: string }>(
    `select p.corrects as movement,
            (count(*) filter (where p.reverses_posting_id is null) - count(*) filter (where p.reverses_posting_id is not null))::int as live,
            count(*) filter (where p.reverses_posting_id is null)::int as corrections,
            string_agg(distinct p.case_id, ', ' order by p.case_id) as cases
       from ledger.postings p
      where p.kind in ('correction', 'recon_adjustment') and p.corrects is not null
      group by p.corrects
     having count(*) filter (where p.reverses_posting_id is null) - count(*) filter (where p.reverses_posting_id is not null) not in (0, 1)
      order by p.corrects`,
  );
  for (const m of movements) bad.add(`movement ${m.movement} has ${m.live} live correcting entries (${m.corrections} posted, cases ${m.cases})`);

  const undos = await s.ledger.query<{ id: string; reverses: string; why: string }>(
    `select u.id::text as id, u.reverses_posting_id::text as reverses,
            case when c.id is null then 'an entry that is not a correction'
                 when c.corrects is distinct from u.corrects then 'a correction of another movement'
                 else 'a correction undone more than once' end as why
       from ledger.postings u left join ledger.postings c on c.id = u.reverses_posting_id and c.kind in ('correction', 'recon_adjustment')
      where u.reverses_posting_id is not null
        and (c.id is null or c.corrects is distinct from u.corrects
             or (select count(*) from ledger.postings x where x.reverses_posting_id = u.reverses_posting_id) > 1)
      order by u.created_at, u.id`,
  );
  for (const u of undos) bad.add(`undoing entry ${u.id} undoes ${u.reverses}: ${u.why}`);

  // The register against the journal: a live row per live correction, undone rows pointing at their undoing entry.
  const register = await s.ledger.query<{ posting_id: string; why: string }>(
    `select c.id::text as posting_id, 'live in the journal, not in the register' as why
       from ledger.postings c
      where c.kind in ('correction', 'recon_adjustment') and c.reverses_posting_id is null and c.corrects is not null
        and not exists (select 1 from ledger.postings u where u.reverses_posting_id = c.id)
        and not exists (select 1 from ledger.corrections r where r.posting_id = c.id and r.reversed_by is null)
     union all
     select r.posting_id::text, 'undone in the register, not in the journal'
       from ledger.corrections r
      where r.reversed_by is not null and not exists (select 1 from ledger.postings u where u.id = r.reversed_by and u.reverses_posting_id = r.posting_id)
      order by 1`,
  );
  for (const r of register) bad.add(`correcting entry ${r.posting_id}: ${r.why}`);

  const [totals] = await s.ledger.query<{ entries: number; live: number }>(
    `select count(*) filter (where reverses_posting_id is null)::int as entries,
            (select count(*) from ledger.corrections where reversed_by is null)::int as live
       from ledger.postings where kind in ('correction', 'recon_adjustment')`,
  );
  return {
    name: 'corrections',
    counts: [
      ['correcting entries', totals?.entries ?? 0],
      ['live', totals?.live ?? 0],
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked: [],
  };
}
