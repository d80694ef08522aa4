import type { WebhookDeps } from './deps.js';
import { endpointOf, requireCompany } from './webhook-checks.js';
import type { EndpointRow } from './ports.js';

/** One of the company's live endpoints (another company's → WEBHOOK_ENDPOINT_NOT_FOUND). */
export class GetEndpoint {
  constructor(private readonly deps: WebhookDeps) {}

  execute(companyId: string | undefined, id: string): Promise<EndpointRow> {
    return endpointOf(this.deps, requireCompany(companyId), id);
  }
}
