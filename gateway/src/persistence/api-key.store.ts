import type { Queryable } from './sql.js';
import { isoCol } from './sql.js';
import type { CompanyStatus, TaxRegime } from './company.store.js';

export type Scope = 'READ' | 'WRITE';

export interface ApiKeyRecord {
  id: string;
  companyId: string;
  prefix: string;
  scope: Scope;
  label: string;
  /** The API version the key is pinned to. */
  apiVersion: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What authentication needs about a key, read in one query by its hash. */
export interface KeyPrincipalRow {
  keyId: string;
  keyHash: string;
  scope: Scope;
  revoked: boolean;
  companyId: string;
  companyStatus: CompanyStatus;
  taxRegime: TaxRegime;
  rateLimitMultiplier: number;
  companyName: string;
  nit: string;
  multiSigThreshold: number;
  counterpartyDailyLimitCents: bigint;
  counterpartyMonthlyLimitCents: bigint;
  apiVersion: string;
}

const COLUMNS = `id::text as id, company_id::text as company_id, prefix, scope, label, api_version,
  ${isoCol('created_at', 'created_at')}, ${isoCol('last_used_at', 'last_used_at')}, ${isoCol('revoked_at', 'revoked_at')}`;

interface Row {
  id: string;
  company_id: string;
  prefix: string;
  scope: Scope;
  label: string;
  api_version: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

function toRecord(r: Row): ApiKeyRecord {
  return {
    id: r.id,
    companyId: r.company_id,
    prefix: r.prefix,
    scope: r.scope,
    label: r.label,
    apiVersion: r.api_version,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

/** API keys, stored only as HMAC-SHA256(pepper, key) under a unique index. */
/** A key with its company, as authentication and the scheduler read it (the caller adds `where`). */
const PRINCIPAL_SELECT = `select k.id::text as key_id, k.key_hash, k.scope, (k.revoked_at is not null) as revoked,
              c.id::text as company_id, c.status, c.tax_regime, c.rate_limit_multiplier::text as multiplier,
              c.name, c.nit, c.multi_sig_threshold, c.counterparty_daily_limit_cents::text as daily,
              c.counterparty_monthly_limit_cents::text as monthly, k.api_version
         from gateway.api_keys k join gateway.companies c on c.id = k.company_id`;

export class ApiKeyStore {
  async insert(
    q: Queryable,
    k: { id: string; companyId: string; keyHash: string; prefix: string; scope: Scope; label: string; apiVersion: string },
  ): Promise<ApiKeyRecord> {
    const rows = await q.query<Row>(
      `insert into gateway.api_keys (id, company_id, key_hash, prefix, scope, label, api_version) values (?, ?, ?, ?, ?, ?, ?) returning ${COLUMNS}`,
      [k.id, k.companyId, k.keyHash, k.prefix, k.scope, k.label, k.apiVersion],
    );
    return toRecord(rows[0]!);
  }

  async listByCompany(q: Queryable, companyId: string): Promise<ApiKeyRecord[]> {
    const rows = await q.query<Row>(`select ${COLUMNS} from gateway.api_keys where company_id = ? order by created_at, id`, [companyId]);
    return rows.map(toRecord);
  }

  async findById(q: Queryable, companyId: string, keyId: string, opts: { forUpdate?: boolean } = {}): Promise<ApiKeyRecord | undefined> {
    const rows = await q.query<Row>(`select ${COLUMNS} from gateway.api_keys where id = ? and company_id = ?${opts.forUpdate ? ' for update' : ''}`, [
      keyId,
      companyId,
    ]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** Revokes once; a repeat keeps the first revocation time (idempotent). */
  async revoke(q: Queryable, companyId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    const rows = await q.query<Row>(
      `update gateway.api_keys set revoked_at = coalesce(revoked_at, now())
        where id = ? and company_id = ? returning ${COLUMNS}`,
      [keyId, companyId],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async findPrincipalByHash(q: Queryable, keyHash: string): Promise<KeyPrincipalRow | undefined> {
    return this.principalOf(q, `${PRINCIPAL_SELECT} where k.key_hash = ?`, keyHash);
  }

  /** The key and its company as a principal, by the key's id (the scheduler acts as the key that wrote a schedule). */
  async findPrincipalById(q: Queryable, companyId: string, keyId: string): Promise<KeyPrincipalRow | undefined> {
    return this.principalOf(q, `${PRINCIPAL_SELECT} where k.id = ?::uuid and k.company_id = ?::uuid`, keyId, companyId);
  }

  private async principalOf(q: Queryable, sql: string, ...params: string[]): Promise<KeyPrincipalRow | undefined> {
    const rows = await q.query<{
      key_id: string;
      key_hash: string;
      scope: Scope;
      revoked: boolean;
      company_id: string;
      status: CompanyStatus;
      tax_regime: TaxRegime;
      multiplier: string;
      name: string;
      nit: string;
      multi_sig_threshold: number;
      daily: string;
      monthly: string;
      api_version: string;
    }>(sql, params);
    const r = rows[0];
    if (!r) return undefined;
    return {
      keyId: r.key_id,
      keyHash: r.key_hash,
      scope: r.scope,
      revoked: r.revoked === true || String(r.revoked) === 'true',
      companyId: r.company_id,
      companyStatus: r.status,
      taxRegime: r.tax_regime,
      rateLimitMultiplier: Number(r.multiplier),
      companyName: r.name,
      nit: r.nit,
      multiSigThreshold: Number(r.multi_sig_threshold),
      counterpartyDailyLimitCents: BigInt(r.daily),
      counterpartyMonthlyLimitCents: BigInt(r.monthly),
      apiVersion: r.api_version,
    };
  }

  /** Records use; cheap because callers throttle it and the row is skipped when recently touched. */
  async touchLastUsed(q: Queryable, keyId: string, minIntervalSeconds: number): Promise<void> {
    await q.query(
      `update gateway.api_keys set last_used_at = now()
        where id = ? and (last_used_at is null or last_used_at < now() - make_interval(secs => ?))`,
      [keyId, minIntervalSeconds],
    );
  }
}
