import { randomBytes, randomUUID } from 'node:crypto';
import { runChecks, sourcesOf, type RailChoice } from './run.js';
import type { CheckName, CheckOptions, InvariantReport } from './report.js';
import { Snapshot, type CheckedSchema, type SqlClient } from './snapshot.js';

const alnum = (n: number) => Array.from(randomBytes(n), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

/**
 * One planted violation per check: SQL that breaks the invariant with records of its own (so it
 * works on an empty installation too), and the id the report must name. Run as the session user
 * inside the self-test's transaction, which is always rolled back.
 */
export interface Sabotage {
  check: CheckName;
  what: string;
  /** An optional schema the plant writes to: where it is not installed, the sabotage is skipped (and said so). */
  needs?: CheckedSchema;
  plant(): { sql: string[]; names: string };
}

export const SABOTAGES: readonly Sabotage[] = [
  {
    check: 'approvals',
    what: "an approval policy version APPROVED on the proposer's signature alone",
    plant() {
      const id = `apol_${alnum(24)}`;
      return {
        names: id,
        sql: [
          `insert into transfer.approval_policies (id, company_id, version, document, status, required_signatures, proposed_by, proposed_by_email, decided_at, effective_at)
               values ('${id}', 'selftest-${alnum(8)}', 1, '{"rules":[],"otherwise":{"action":"ALLOW"}}'::jsonb, 'APPROVED', 2, 'selftest', 'selftest@empresa.co', now(), now())`,
          `insert into transfer.approval_policy_signatures (policy_id, user_id, email, role) values ('${id}', 'selftest', 'selftest@empresa.co', 'ADMIN')`,
        ],
      };
    },
  },
  {
    check: 'cobros',
    what: 'a PAID cobro whose paid total no payment makes up',
    plant() {
      const id = `cob_${alnum(24)}`;
      return {
        names: id,
        sql: [
          `insert into pse_deposit.cobros (id, company_id, reference, state, amount_type, amount, paid_amount, overpayment_policy, methods, transaction_id,
                 request_hash, expires_at, created_at, updated_at)
               values ('${id}', 'selftest-${alnum(8)}', 'SELFTEST-${alnum(8)}', 'PAID', 'FIXED', 1000, 1000, 'accept', '{BREB_KEY}', 'CB${alnum(20).toUpperCase()}',
                 '[]', now() + interval '1 day', now(), now())`,
        ],
      };
    },
  },
  {
    check: 'holds',
    what: 'a DISPATCHED transfer with no hold in the ledger',
    plant() {
      const id = randomUUID();
      return {
        names: id,
        sql: [
          `insert into transfer.transfers (id, company_id, rail, state, amount, fixed_fee, variable_fee, subtotal_fee, iva_applicable, iva_amount,
                 total_charged, target_name, target_document, counterparty_document, destination)
               values ('${id}', 'selftest-${alnum(8)}', 'BREB', 'DISPATCHED', 1000, 0, 0, 0, false, 0, 0, 'Self Test', '1', '1',
                 '{"kind":"BREB","keyType":"PHONE","keyValue":"3000000000"}'::jsonb)`,
        ],
      };
    },
  },
  {
    check: 'deposits',
    what: 'an ASSIGNED PSE deposit never credited',
    plant() {
      const id = `dep_${alnum(24)}`;
      return {
        names: id,
        sql: [
          `insert into pse_deposit.deposits (id, company_id, source, status, amount, net_amount, movement_id)
               values ('${id}', 'selftest-${alnum(8)}', 'PSE', 'ASSIGNED', 50000, 50000, '${randomUUID()}')`,
        ],
      };
    },
  },
  {
    check: 'inbound',
    what: 'an inbound Bre-B payment recorded as ASSIGNED but booked nowhere',
    plant() {
      const key = `bkey_${alnum(24)}`;
      const ptid = `selftest-${randomUUID()}`;
      const company = `selftest-${alnum(8)}`;
      return {
        names: ptid,
        sql: [
          `insert into collect_key.keys (id, company_id, external_id, name, key_value, state, deleted_at)
             values ('${key}', '${company}', 'selftest', 'Self Test', '@selftest${alnum(8)}', 'DELETED', now())`,
          `insert into collect_key.payments (deposit_id, provider_transfer_id, company_id, key_id, key_external_id, key_name, key_value, key_state,
                 status, amount, net_amount, received_at, movement_id)
             values ('dep_${alnum(24)}', '${ptid}', '${company}', '${key}', 'selftest', 'Self Test', '@selftest', 'ACTIVE',
                 'ASSIGNED', 70000, 70000, now(), '${randomUUID()}')`,
        ],
      };
    },
  },
  {
    check: 'deposits',
    what: "a PSE credit owed for a day with nobody running it and no exception (past the sweepers' horizon)",
    plant() {
      const id = `dep_${alnum(24)}`;
      return {
        names: id,
        sql: [
          `insert into pse_deposit.deposits (id, company_id, source, status, pending_step, step_at, amount, net_amount, movement_id)
               values ('${id}', 'selftest-${alnum(8)}', 'PSE', 'CREDITING', 'CREDIT', now() - interval '1 day', 50000, 50000, '${randomUUID()}')`,
        ],
      };
    },
  },
  {
    check: 'journal',
    what: 'a posting that does not sum to zero',
    plant() {
      const id = randomUUID();
      return {
        names: id,
        sql: [
          `insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail) values ('${id}', 'selftest:${id}', 'x', 'credit', 'selftest-${alnum(8)}', 'BREB')`,
          `insert into ledger.entries (posting_id, seq, account, amount) values ('${id}', 1, 'funding:selftest', 1)`,
        ],
      };
    },
  },
  {
    check: 'exceptions',
    what: 'a money exception stuck RESOLVING for a day, about a transfer that does not exist',
    plant() {
      const id = `exc_${randomBytes(16).toString('hex')}`;
      return {
        names: id,
        sql: [
          `insert into transfer.money_exceptions (id, kind, status, company_id, rail, resource_id, ours, theirs, opened_at)
               values ('${id}', 'RAIL_COMPLETED_AFTER_RELEASE', 'RESOLVING', 'selftest-${alnum(8)}', 'BREB', '${randomUUID()}', '{}', '{}', now() - interval '1 day')`,
        ],
      };
    },
  },
  {
    check: 'clearing',
    what: 'a Bre-B provider report (a RECONCILED run of a day long past) whose money never reached the ledger',
    needs: 'reconciliation',
    plant() {
      // A day of 1970-1999 (no ledger movement), a net that cannot collide: 9 random digits.
      const day = new Date(Date.UTC(1970, 0, 1) + (randomBytes(2).readUInt16BE() % 10_950) * 86_400_000).toISOString().slice(0, 10);
      const net = 100_000_000 + (randomBytes(4).readUInt32BE() % 900_000_000);
      return {
        names: `difference (R − D) − (L − U) = ${net}`,
        sql: [
          `insert into reconciliation.runs (id, rail, date, status, outcome, finished_at, requested_by, report_lines, report_amount_cents, report_fee_cents, report_net_cents, ours_net_cents)
               values ('run_${randomBytes(16).toString('hex')}', 'breb', '${day}', 'RECONCILED', 'RECONCILED', now(), 'selftest', 1, ${net}, 0, ${net}, 0)`,
        ],
      };
    },
  },
  {
    check: 'corrections',
    what: 'one payout corrected twice: a write-off and an accepted break of the same movement, both live',
    plant() {
      const movement = `breb:selftest-${randomUUID()}`;
      const sql = [0, 1].flatMap((i) => {
        const id = randomUUID();
        return [
          `insert into ledger.postings (id, idempotency_key, request_hash, kind, company_id, rail, corrects, case_id)
             values ('${id}', 'selftest:${id}', 'x', '${i === 0 ? 'correction' : 'recon_adjustment'}', '', 'BREB', '${movement}', 'exc_selftest${i}')`,
          `insert into ledger.entries (posting_id, seq, account, amount) values ('${id}', 1, 'rail_clearing:BREB', 1), ('${id}', 2, 'operational_losses', -1)`,
        ];
      });
      return { names: movement, sql };
    },
  },
];

export interface SelfTestResult {
  check: CheckName;
  what: string;
  caught: boolean;
  /** Why the sabotage was not planted (its schema is not installed): neither caught nor missed. */
  skipped?: string;
  /** The report run over the broken snapshot (for printing). */
  report: InvariantReport;
}

/**
 * Proof that each check can fail: inside one transaction per check (never committed), plant its
 * violation, run the checks over that snapshot, and require the report to name the planted record.
 * `only`: the checks to break (default all). `fullReport`: run every check over each broken
 * snapshot (the CLI's --break), not just the broken one.
 */
export async function selfTest(
  client: SqlClient,
  o: CheckOptions & { rail?: RailChoice; checks?: readonly CheckName[]; fullReport?: boolean; partial?: boolean } = {},
): Promise<SelfTestResult[]> {
  const out: SelfTestResult[] = [];
  for (const s of SABOTAGES.filter((x) => !o.checks || o.checks.includes(x.check))) {
    const snap = await Snapshot.begin(client, { readOnly: false });
    try {
      if (s.needs && !(await snap.installed([s.needs])).has(s.needs)) {
        const report = await runChecks(await sourcesOf(snap, o.rail, { partial: o.partial ?? false }), { ...o, ...(o.fullReport ? {} : { only: [s.check] }) });
        out.push({ check: s.check, what: s.what, caught: false, skipped: `no ${s.needs} installed`, report });
        continue;
      }
      const planted = s.plant();
      for (const sql of planted.sql) await snap.asSessionUser(sql);
      const report = await runChecks(await sourcesOf(snap, o.rail, { partial: o.partial ?? false }), {
        ...o,
        ...(o.fullReport ? {} : { only: [s.check] }),
        list: Math.max(o.list ?? 50, 1000),
      });
      const c = report.checks.find((x) => x.name === s.check);
      out.push({ check: s.check, what: s.what, caught: !!c && c.violations.some((v) => v.includes(planted.names)), report });
    } finally {
      await snap.rollback();
    }
  }
  return out;
}
