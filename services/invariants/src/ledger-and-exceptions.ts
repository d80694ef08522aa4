import { checkJournal as ledgerJournal } from '@wallet/ledger/invariants';
import { Offenders, companyScope, formatAge, type CheckOptions, type CheckResult, type CheckSources, type OpenException } from './report.js';

/**
 * journal: the ledger's own invariants (LEDGER.md 1-5: every posting sums to zero, balances equal
 * the journal, pending_out equals the open holds, no wallet below zero but by a reversal, each
 * movement equals its postings), the very SQL the ledger's CheckInvariants RPC runs, here under the
 * ledger's read-only role in the checker's snapshot. Always the whole journal (a company's slice of a
 * double-entry journal does not balance on its own), or, `journal: 'incremental'`, what it sealed since
 * the ledger's verified cut (docs/ledger-check.md), said in the report.
 */
export async function checkJournal(s: CheckSources, o: CheckOptions, limit: number): Promise<CheckResult> {
  const r = await ledgerJournal((sql) => s.ledger.query(sql), { mode: o.journal ?? 'full' });
  const bad = new Offenders(limit);
  for (const v of r.violations) bad.add(v);
  return {
    name: 'journal',
    counts: [
      ['postings', Number(r.postings)],
      ['entries', Number(r.entries)],
      ['wallets', Number(r.wallets)],
    ],
    violations: bad.lines,
    total: bad.total,
    notChecked:
      r.mode === 'incremental' && r.since
        ? [`incremental: what was sealed after #${r.since.seq} (verified ${r.since.verifiedAt}); older rows are the full check's`]
        : o.journal === 'incremental'
          ? ['incremental asked, no verified cut yet: the whole journal was checked']
          : [],
  };
}

interface ExceptionRow {
  id: string;
  kind: string;
  status: 'OPEN' | 'RESOLVING';
  company_id: string;
  resource_id: string;
  opened_at: Date;
  age: number;
}

/**
 * exceptions: every money exception not yet resolved, with its age (an operator's queue, not a
 * violation). Violations: one stuck RESOLVING (an operator's resolution cut short: run it again with
 * the same action), or one about a transfer, deposit or refund that does not exist.
 */
export async function checkExceptions(s: CheckSources, o: CheckOptions, limit: number): Promise<{ result: CheckResult; open: OpenException[] }> {
  const bad = new Offenders(limit);
  const stuckAfter = o.resolvingStuckSeconds ?? 600;
  const scope = companyScope(o, 1);
  const now = (o.now ?? new Date()).toISOString();
  const read = (reader: CheckSources['transfer'], schema: string) =>
    reader.query<ExceptionRow>(
      `select id, kind, status, company_id, resource_id, opened_at, extract(epoch from ($1::timestamptz - opened_at))::float8 as age
       from ${schema}.money_exceptions where status <> 'RESOLVED'${scope.sql} order by opened_at, id`,
      [now, ...scope.params],
    );
  const transfer = await read(s.transfer, 'transfer');
  const deposit = await read(s.deposit, 'pse_deposit');

  const knownTransfers = new Set(
    (
      await s.transfer.query<{ id: string }>(`select id::text as id from transfer.transfers where id = any($1::uuid[])`, [
        transfer.map((e) => e.resource_id).filter((id) => /^[0-9a-f-]{36}$/i.test(id)),
      ])
    ).map((r) => r.id),
  );
  // A refund's exception (RETURN_CLOSE_REFUSED: the ledger would not close its hold) is about the refund; the others about the deposit.
  const knownDeposits = new Set([
    ...(await s.deposit.query<{ id: string }>(`select id from pse_deposit.deposits where id = any($1::text[])`, [deposit.map((e) => e.resource_id)])).map(
      (r) => r.id,
    ),
    ...(
      await s.deposit.query<{ id: string }>(`select id from pse_deposit.deposit_returns where id = any($1::text[])`, [
        deposit.filter((e) => e.kind === 'RETURN_CLOSE_REFUSED').map((e) => e.resource_id),
      ])
    ).map((r) => r.id),
  ]);

  const open: OpenException[] = [];
  for (const [owner, rows, known] of [
    ['transfer', transfer, knownTransfers],
    ['pse-deposit', deposit, knownDeposits],
  ] as const) {
    for (const e of rows) {
      open.push({
        id: e.id,
        owner,
        kind: e.kind,
        status: e.status,
        companyId: e.company_id,
        resourceId: e.resource_id,
        openedAt: e.opened_at,
        ageSeconds: Number(e.age),
      });
      if (!known.has(e.resource_id)) bad.add(`exception ${e.id} (${e.kind}) is about ${owner} ${e.resource_id}, which does not exist`);
      if (e.status === 'RESOLVING' && Number(e.age) > stuckAfter)
        bad.add(
          `exception ${e.id} (${e.kind}) of ${owner} ${e.resource_id} has been RESOLVING since a resolution was cut short; resolve it again with the same action`,
        );
    }
  }
  open.sort((a, b) => a.openedAt.getTime() - b.openedAt.getTime() || a.id.localeCompare(b.id));
  const oldest = open[0];
  return {
    result: {
      name: 'exceptions',
      counts: [
        ['open', open.filter((e) => e.status === 'OPEN').length],
        ['resolving', open.filter((e) => e.status === 'RESOLVING').length],
        ...(oldest ? [['oldest open for', formatAge(oldest.ageSeconds)] as [string, string]] : []),
      ],
      violations: bad.lines,
      total: bad.total,
      notChecked: [],
    },
    open,
  };
}
