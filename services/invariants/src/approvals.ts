import { Offenders, companyScope, type CheckOptions, type CheckResult, type CheckSources } from './report.js';

/**
 * approvals (docs/policies.md): no send went out on fewer signatures than its rule asked, from other
 * roles than it counts, and no policy changed on fewer signatures than the company's quorum.
 * - a transfer records no REFUSE decision (a refused send is never recorded);
 * - a single send's approval is what its decision asked: REQUIRE_APPROVALS has an approval of that many
 *   signatures from those roles, ALLOW has none; a bulk payout item's approval (the batch's, the
 *   strictest of its lines and total) asks at least what its own line's decision asked;
 * - an APPROVED approval has at least its threshold of signatures, each from a role it counts;
 * - an APPROVED (or in force) policy version was signed by at least its required signatures, never
 *   fewer than two, all different ADMINs.
 */
export async function checkApprovals(s: CheckSources, o: CheckOptions, limit: number): Promise<CheckResult> {
  const bad = new Offenders(limit);
  const t = companyScope(o, 0, 't.company_id');
  const decisions = await s.transfer.query<{ id: string; company_id: string; why: string }>(
    `select t.id::text as id, t.company_id, case
         when t.policy_decision->>'action' = 'REFUSE' then 'records a REFUSE decision: a refused send is never recorded'
         when t.batch_id is null and t.policy_decision->>'action' = 'REQUIRE_APPROVALS' and t.approval_id is null
           then 'was decided REQUIRE_APPROVALS and has no approval'
         when t.batch_id is null and t.policy_decision->>'action' = 'REQUIRE_APPROVALS'
              and t.approval_threshold is distinct from (t.policy_decision->>'approvals')::int
           then 'has an approval of ' || coalesce(t.approval_threshold::text, 'no') || ' signatures; its decision asked ' || (t.policy_decision->>'approvals')
         when t.batch_id is null and t.policy_decision->>'action' = 'ALLOW' and t.approval_id is not null then 'was decided ALLOW and waits for an approval'
         when t.batch_id is not null and t.policy_decision->>'action' = 'REQUIRE_APPROVALS'
              and coalesce(t.approval_threshold, 0) < (t.policy_decision->>'approvals')::int
           then 'is a bulk payout line whose batch approval asks fewer signatures than the line''s decision'
       end as why
       from transfer.transfers t
      where t.policy_decision is not null${t.sql}
        and (t.policy_decision->>'action' = 'REFUSE'
          or (t.batch_id is null and t.policy_decision->>'action' = 'REQUIRE_APPROVALS'
              and (t.approval_id is null or t.approval_threshold is distinct from (t.policy_decision->>'approvals')::int))
          or (t.batch_id is null and t.policy_decision->>'action' = 'ALLOW' and t.approval_id is not null)
          or (t.batch_id is not null and t.policy_decision->>'action' = 'REQUIRE_APPROVALS'
              and coalesce(t.approval_threshold, 0) < (t.policy_decision->>'approvals')::int))
      order by t.created_at, t.id`,
    t.params,
  );
  for (const d of decisions) bad.add(`transfer ${d.id} (company ${d.company_id}) ${d.why}`);

  const a = companyScope(o, 0, 'a.company_id');
  const approvals = await s.transfer.query<{ id: string; company_id: string; why: string }>(
    `select a.id, a.company_id,
            case when x.signed < a.threshold then 'APPROVED with ' || x.signed || ' of ' || a.threshold || ' signatures'
                 else 'counts a signature of role ' || x.foreign_role || '; it counts ' || array_to_string(a.roles, ', ') end as why
       from transfer.approvals a
       join lateral (select count(*)::int as signed,
                            min(s.role) filter (where a.roles is not null and not (s.role = any(a.roles))) as foreign_role
                       from transfer.approval_signatures s where s.approval_id = a.id) x on true
      where a.status = 'APPROVED'${a.sql} and (x.signed < a.threshold or x.foreign_role is not null)
      order by a.created_at, a.id`,
    a.params,
  );
  for (const r of approvals) bad.add(`approval ${r.id} (company ${r.company_id}) ${r.why}`);

  const p = companyScope(o, 0, 'p.company_id');
  const versions = await s.transfer.query<{ id: string; company_id: string; version: number; why: string }>(
    `select p.id, p.company_id, p.version,
            case when p.required_signatures < 2 then 'needed only ' || p.required_signatures || ' signature'
                 else 'APPROVED with ' || x.admins || ' ADMIN signatures of ' || p.required_signatures || ' (' || x.signed || ' in all)' end as why
       from transfer.approval_policies p
       join lateral (select count(*)::int as signed, count(distinct s.user_id) filter (where s.role = 'ADMIN')::int as admins
                       from transfer.approval_policy_signatures s where s.policy_id = p.id) x on true
      where p.status = 'APPROVED'${p.sql} and (p.required_signatures < 2 or x.admins < p.required_signatures)
      order by p.created_at, p.id`,
    p.params,
  );
  for (const v of versions) bad.add(`policy version ${v.id} (company ${v.company_id}, version ${v.version}) ${v.why}`);

  const [counts] = await s.transfer.query<{ decided: number; approvals: number; versions: number }>(
    `select (select count(*) from transfer.transfers t where t.policy_decision is not null${t.sql})::int as decided,
            (select count(*) from transfer.approvals a where a.status = 'APPROVED'${a.sql})::int as approvals,
            (select count(*) from transfer.approval_policies p where p.status = 'APPROVED'${p.sql})::int as versions`,
    t.params,
  );
  return {
    name: 'approvals',
    counts: [
      ['decided transfers', counts?.decided ?? 0],
      ['approved approvals', counts?.approvals ?? 0],
      ['approved policy versions', counts?.versions ?? 0],
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked: [],
  };
}
