import { randomUUID } from 'node:crypto';
import { AppError, type Database } from '@wallet/platform';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../auth/api-key-format.js';
import type { ApiKeyRecord, ApiKeyStore, Scope } from '../persistence/api-key.store.js';
import type { CompanyStore } from '../persistence/company.store.js';
import type { Queryable } from '../persistence/sql.js';
import type { AuditTrail } from '../audit/admin-audit.js';
import type { SecurityNotice, SecurityNotices } from './security-notices.js';
import { LATEST_API_VERSION } from '../api-versions.js';
export type { ApiKeyRecord } from '../persistence/api-key.store.js';

/** Operator use cases on API keys: issue (shown once), list, revoke. */
export class ApiKeyAdmin {
  constructor(
    private readonly db: Database,
    private readonly companies: CompanyStore,
    private readonly keys: ApiKeyStore,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly opts: { pepper: string; prefix: 'wk_test_' | 'wk_live_' },
    /** The company is told of a revoked key (event + e-mail to its admins: docs/security.md, "The company is told"). */
    private readonly notices?: SecurityNotices,
  ) {}

  /**
   * Issues a key in the caller's transaction (AdminChanges: a WRITE key by an operator only once a
   * second operator approves; the key goes to the company's administrators). The record holds the
   * display prefix, never the key; the key is returned once, for CredentialDelivery.
   */
  async issueWithin(q: Queryable, companyId: string, scope: Scope, label: string): Promise<ApiKeyRecord & { key: string }> {
    // A 238-bit collision is not going to happen; if it did, the unique index refuses the insert.
    const key = generateApiKey(this.opts.prefix);
    const record = await this.keys.insert(q, {
      id: randomUUID(),
      companyId,
      keyHash: hashApiKey(this.opts.pepper, key),
      prefix: displayPrefix(key),
      scope,
      label,
      // Pinned to the newest version: a key keeps the API it was written against until its owner moves.
      apiVersion: LATEST_API_VERSION,
    });
    return { ...record, key };
  }

  async list(companyId: string): Promise<ApiKeyRecord[]> {
    await this.assertCompany(companyId);
    return this.keys.listByCompany(this.db, companyId);
  }

  /**
   * Idempotent; the key stops working at once on this replica (cache entry dropped) and within the cache TTL elsewhere.
   * The first revocation tells the company (`API_KEY_REVOKED`, in the same transaction); a repeated one changes nothing and tells no one.
   */
  async revoke(
    companyId: string,
    keyId: string,
    audit?: AuditTrail,
    actor: SecurityNotice['actor'] = { kind: 'bootstrap-token', id: null },
  ): Promise<ApiKeyRecord> {
    await this.assertCompany(companyId);
    let told = false;
    const record = await this.db.tx(async (tx) => {
      const before = await this.keys.findById(tx, companyId, keyId, { forUpdate: true });
      if (!before) throw new AppError('API_KEY_NOT_FOUND');
      const after = (await this.keys.revoke(tx, companyId, keyId))!;
      await audit?.record(tx, { targets: { companyId, keyId }, before, after });
      if (this.notices && before.revokedAt === null) {
        await this.notices.record(tx, {
          companyId,
          change: 'API_KEY_REVOKED',
          actor,
          summary: `Se revocó la clave de API ${after.prefix}… (${after.label}, ${after.scope === 'WRITE' ? 'escritura' : 'lectura'}); deja de funcionar de inmediato.`,
          details: { keyId, prefix: after.prefix, label: after.label, scope: after.scope, revokedAt: after.revokedAt },
        });
        told = true;
      }
      return after;
    });
    this.authenticator.invalidateKey(keyId);
    if (told) this.notices!.nudge();
    return record;
  }

  private async assertCompany(companyId: string): Promise<void> {
    if (!(await this.companies.exists(this.db, companyId))) throw new AppError('COMPANY_NOT_FOUND');
  }
}
