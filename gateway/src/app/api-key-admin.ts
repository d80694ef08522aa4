import { randomUUID } from 'node:crypto';
import { AppError, isUniqueViolation, type Database } from '@wallet/platform';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../auth/api-key-format.js';
import type { ApiKeyRecord, ApiKeyRepository, Scope } from '../persistence/api-key.repository.js';
import type { CompanyRepository } from '../persistence/company.repository.js';

/** Operator use cases on API keys: issue (shown once), list, revoke. */
export class ApiKeyAdmin {
  constructor(
    private readonly db: Database,
    private readonly companies: CompanyRepository,
    private readonly keys: ApiKeyRepository,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly opts: { pepper: string; prefix: 'wk_test_' | 'wk_live_' },
  ) {}

  async issue(companyId: string, scope: Scope, label: string): Promise<ApiKeyRecord & { key: string }> {
    await this.assertCompany(companyId);
    for (let attempt = 0; ; attempt++) {
      const key = generateApiKey(this.opts.prefix);
      try {
        const record = await this.keys.insert(this.db, {
          id: randomUUID(), companyId, keyHash: hashApiKey(this.opts.pepper, key), prefix: displayPrefix(key), scope, label,
        });
        return { ...record, key };
      } catch (err) {
        // A 238-bit collision is not going to happen, but the unique index decides, not hope.
        if (!isUniqueViolation(err) || attempt >= 2) throw err;
      }
    }
  }

  async list(companyId: string): Promise<ApiKeyRecord[]> {
    await this.assertCompany(companyId);
    return this.keys.listByCompany(this.db, companyId);
  }

  /** Idempotent; the key stops working at once on this replica (cache entry dropped) and within the cache TTL elsewhere. */
  async revoke(companyId: string, keyId: string): Promise<ApiKeyRecord> {
    await this.assertCompany(companyId);
    const record = await this.keys.revoke(this.db, companyId, keyId);
    if (!record) throw new AppError('API_KEY_NOT_FOUND');
    this.authenticator.invalidateKey(keyId);
    return record;
  }

  private async assertCompany(companyId: string): Promise<void> {
    if (!(await this.companies.exists(this.db, companyId))) throw new AppError('COMPANY_NOT_FOUND');
  }
}
