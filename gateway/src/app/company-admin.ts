import { randomUUID } from 'node:crypto';
import { AppError, type CallContext, type Database } from '@wallet/platform';
import type { AuditTrail } from '../audit/admin-audit.js';
import type { Queryable } from '../persistence/sql.js';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.js';
import type { LedgerClient } from '../clients/ledger-client.js';
import { railToProto, type ApiRail } from '../api/wallets/presenters.js';
import type { Company, CompanyPatch, CompanyStore, TaxRegime } from '../persistence/company.store.js';
import { actingOn } from '../clients/acting-on.js';
import { formatCop } from '@wallet/platform';
import type { SecurityNotice } from './security-notices.js';
/** The company's record as the admin routes answer it. */
export type { Company, TaxRegime } from '../persistence/company.store.js';

export interface CreateCompanyInput {
  name: string;
  nit: string;
  taxRegime: TaxRegime;
  multiSigThreshold: number;
  wallets: ApiRail[];
}

/** Operator use cases on companies: provision (with its wallets), read, change. */
export class CompanyAdmin {
  constructor(
    private readonly db: Database,
    private readonly companies: CompanyStore,
    private readonly ledger: LedgerClient,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /**
   * Creates the company and opens its wallets in the ledger inside one database transaction: if
   * the ledger refuses or is unreachable the insert rolls back, so there is never a company
   * without the wallets it asked for. (If the commit itself failed after the ledger answered, the
   * ledger would hold empty wallets for an id nobody can use: harmless, and OpenWallets is
   * idempotent should the operator retry.)
   */
  async create(input: CreateCompanyInput, call: CallContext, audit?: AuditTrail): Promise<Company> {
    const id = randomUUID();
    return this.db.tx(async (tx) => {
      const company = await this.companies.insert(tx, {
        id,
        name: input.name,
        nit: input.nit,
        taxRegime: input.taxRegime,
        multiSigThreshold: input.multiSigThreshold,
      });
      if (input.wallets.length > 0) {
        await this.ledger.openWallets({ rails: input.wallets.map(railToProto) }, actingOn(call, id));
      }
      await audit?.record(tx, { targets: { companyId: id }, before: null, after: { ...company, wallets: input.wallets } });
      return company;
    });
  }

  async get(id: string): Promise<Company> {
    const company = await this.companies.findById(this.db, id);
    if (!company) throw new AppError('COMPANY_NOT_FOUND');
    return company;
  }

  /**
   * Changes a company in the caller's transaction (AdminChanges decides whether it needs a second
   * operator and tells the company); the caller then calls `forgetCached` after the commit.
   */
  async patchWithin(q: Queryable, id: string, patch: CompanyPatch): Promise<{ before: Company; after: Company }> {
    const before = await this.companies.findById(q, id, { forUpdate: true });
    if (!before) throw new AppError('COMPANY_NOT_FOUND');
    const after = (await this.companies.update(q, id, patch))!;
    return { before, after };
  }

  /** Status, tax regime and multiplier travel with cached principals: drop them on this replica now (others hear the change feed). */
  forgetCached(id: string): void {
    this.authenticator.invalidateCompany(id);
  }

  async assertExists(id: string): Promise<void> {
    if (!(await this.companies.exists(this.db, id))) throw new AppError('COMPANY_NOT_FOUND');
  }
}

const STATUS_ES: Record<Company['status'], string> = { ACTIVE: 'activa', SUSPENDED: 'suspendida' };

/** What a company's people are told of a PATCH: its counterparty limits and its status (docs/security.md, "The company is told"; AdminChanges records them). */
export function companyNotices(before: Company, after: Company, actor: SecurityNotice['actor']): SecurityNotice[] {
  const out: SecurityNotice[] = [];
  const limits: string[] = [];
  const details: Record<string, { before: string; after: string }> = {};
  for (const [field, name] of [
    ['counterpartyDailyLimitCents', 'diario'],
    ['counterpartyMonthlyLimitCents', 'mensual'],
  ] as const) {
    if (before[field] === after[field]) continue;
    limits.push(`${name} de ${formatCop(before[field])} a ${formatCop(after[field])}`);
    details[field] = { before: before[field].toString(), after: after[field].toString() };
  }
  if (limits.length > 0) {
    out.push({ companyId: after.id, change: 'LIMITS_CHANGED', actor, summary: `Cambió el límite por contraparte: ${limits.join('; ')}.`, details });
  }
  if (before.status !== after.status) {
    out.push({
      companyId: after.id,
      change: 'STATUS_CHANGED',
      actor,
      summary:
        `La empresa pasó de ${STATUS_ES[before.status]} a ${STATUS_ES[after.status]}.` +
        (after.status === 'SUSPENDED' ? ' Sus claves de API y el panel dejan de operar mientras esté suspendida.' : ''),
      details: { status: { before: before.status, after: after.status } },
    });
  }
  return out;
}
