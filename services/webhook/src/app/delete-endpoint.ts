import { AppError } from '@wallet/platform';
import { PLATFORM_TENANT } from '../domain/event-types.js';
import type { WebhookDeps } from './deps.js';
import { requireCompany } from './webhook-checks.js';

/** Deletes an endpoint (soft: the delivery log stays); its pending deliveries end FAILED. */
export class DeleteEndpoint {
  constructor(private readonly deps: WebhookDeps) {}

  execute(companyId: string | undefined, id: string): Promise<void> {
    return this.delete(requireCompany(companyId), id);
  }

  forPlatform(id: string): Promise<void> {
    return this.delete(PLATFORM_TENANT, id);
  }

  private async delete(cid: string, id: string): Promise<void> {
    if (!(await this.deps.store.deleteEndpoint(cid, id))) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
  }
}
