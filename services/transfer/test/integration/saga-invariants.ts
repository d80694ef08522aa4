import pg from 'pg';
import { checkInvariants, mapRail, violationLines, type RailTransferStatus } from '@wallet/invariants';

/** What the rail says happened to each transfer it received (the provider's truth). */
export type RailTruth = ReadonlyMap<string, RailTransferStatus>;

/**
 * The send saga's cross-service invariants for one company: the shared checker's `holds` check
 * (services/invariants, the same code as `npm run ledger:check` and the fault suite) over the
 * transfer and ledger schemas through their read-only roles, with the scripted rail's truth, plus
 * the ledger's own journal. Quiescent: every actor of the schedule has finished, so no money step
 * is half done, though a sweeper may still owe one. Empty when they hold; else one line each.
 */
export async function sagaViolations(databaseUrl: string, companyId: string, rail?: RailTruth): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const report = await checkInvariants(client, {
      companyId,
      quiescent: true,
      only: ['holds', 'journal'],
      rail: rail ? mapRail(rail) : 'none',
      partial: true,
    });
    return violationLines(report);
  } finally {
    await client.end();
  }
}

/**
 * The approval-policy invariants (services/invariants `approvals`, docs/policies.md) over the
 * transfer schema: no refused send recorded, each approval what its decision asked, every APPROVED
 * approval and policy version signed by its quorum from the roles it counts. Empty when they hold.
 */
export async function approvalViolations(databaseUrl: string, companyId?: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const report = await checkInvariants(client, { ...(companyId ? { companyId } : {}), only: ['approvals'], rail: 'none', partial: true });
    expect(report.checks.map((c) => c.name)).toEqual(['approvals']);
    return violationLines(report);
  } finally {
    await client.end();
  }
}
