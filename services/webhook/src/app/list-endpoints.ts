import { PLATFORM_TENANT } from '../domain/event-types.js';
import type { WebhookDeps } from './deps.js';
import { requireCompany } from './webhook-checks.js';
import type { EndpointRow } from './ports.js';

/** The tenant's live endpoints, oldest first. */
export class ListEndpoints {
  constructor(private readonly deps: WebhookDeps) {}

  execute(companyId: string | undefined): Promise<EndpointRow[]> {
    return this.deps.store.listEndpoints(requireCompany(companyId));
  }

  forPlatform(): Promise<EndpointRow[]> {
    return this.deps.store.listEndpoints(PLATFORM_TENANT);
  }
}
