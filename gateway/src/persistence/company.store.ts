import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';

export type TaxRegime = 'COMMON' | 'SIMPLE';
export type CompanyStatus = 'ACTIVE' | 'SUSPENDED';

export interface Company {
  id: string;
  name: string;
  nit: string;
  taxRegime: TaxRegime;
  status: CompanyStatus;
  multiSigThreshold: number;
  counterpartyDailyLimitCents: bigint;
  counterpartyMonthlyLimitCents: bigint;
  rateLimitMultiplier: number;
  createdAt: string;
  updatedAt: string;
}

export interface NewCompany {
  id: string;
  name: string;
  nit: string;
  taxRegime: TaxRegime;
  multiSigThreshold: number;
}

export interface CompanyPatch {
  status?: CompanyStatus;
  taxRegime?: TaxRegime;
  multiSigThreshold?: number;
  counterpartyDailyLimitCents?: bigint;
  counterpartyMonthlyLimitCents?: bigint;
  rateLimitMultiplier?: number;
}

const COLUMNS = `id::text as id, name, nit, tax_regime, status, multi_sig_threshold,
  counterparty_daily_limit_cents::text as daily, counterparty_monthly_limit_cents::text as monthly,
  rate_limit_multiplier::text as multiplier, ${isoCol('created_at', 'created_at')}, ${isoCol('updated_at', 'updated_at')}`;

interface Row {
  id: string;
  name: string;
  nit: string;
  tax_regime: TaxRegime;
  status: CompanyStatus;
  multi_sig_threshold: number;
  daily: string;
  monthly: string;
  multiplier: string;
  created_at: string;
  updated_at: string;
}

function toCompany(r: Row): Company {
  return {
    id: r.id,
    name: r.name,
    nit: r.nit,
    taxRegime: r.tax_regime,
    status: r.status,
    multiSigThreshold: Number(r.multi_sig_threshold),
    counterpartyDailyLimitCents: BigInt(r.daily),
    counterpartyMonthlyLimitCents: BigInt(r.monthly),
    rateLimitMultiplier: Number(r.multiplier),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Companies (tenants) in the gateway schema. */
export class CompanyStore {
  async insert(q: Queryable, c: NewCompany): Promise<Company> {
    const rows = await q.query<Row>(
      `insert into gateway.companies (id, name, nit, tax_regime, multi_sig_threshold) values (?, ?, ?, ?, ?) returning ${COLUMNS}`,
      [c.id, c.name, c.nit, c.taxRegime, c.multiSigThreshold],
    );
    return toCompany(rows[0]!);
  }

  async findById(q: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<Company | undefined> {
    const rows = await q.query<Row>(`select ${COLUMNS} from gateway.companies where id = ?${opts.forUpdate ? ' for update' : ''}`, [id]);
    return rows[0] ? toCompany(rows[0]) : undefined;
  }

  async update(q: Queryable, id: string, patch: CompanyPatch): Promise<Company | undefined> {
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => {
      sets.push(`${column} = ?`);
      params.push(value);
    };
    if (patch.status !== undefined) set('status', patch.status);
    if (patch.taxRegime !== undefined) set('tax_regime', patch.taxRegime);
    if (patch.multiSigThreshold !== undefined) set('multi_sig_threshold', patch.multiSigThreshold);
    if (patch.counterpartyDailyLimitCents !== undefined) set('counterparty_daily_limit_cents', patch.counterpartyDailyLimitCents.toString());
    if (patch.counterpartyMonthlyLimitCents !== undefined) set('counterparty_monthly_limit_cents', patch.counterpartyMonthlyLimitCents.toString());
    if (patch.rateLimitMultiplier !== undefined) set('rate_limit_multiplier', patch.rateLimitMultiplier);
    if (sets.length === 0) return this.findById(q, id);
    sets.push('updated_at = now()');
    const rows = await q.query<Row>(`update gateway.companies set ${sets.join(', ')} where id = ? returning ${COLUMNS}`, [...params, id]);
    return rows[0] ? toCompany(rows[0]) : undefined;
  }

  /** The company's name, or undefined when there is no such company. */
  async nameOf(q: Queryable, id: string): Promise<string | undefined> {
    const [company] = await q.query<{ name: string }>(`select name from gateway.companies where id = ?`, [id]);
    return company?.name;
  }

  async exists(q: Queryable, id: string): Promise<boolean> {
    const rows = await q.query(`select 1 from gateway.companies where id = ?`, [id]);
    return rows.length > 0;
  }
}
