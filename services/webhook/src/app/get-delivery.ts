import type { WebhookDeps } from './deps.js';
import { deliveryOf, requireCompany } from './webhook-checks.js';
import type { DeliveryRow } from './ports.js';

/** One of the company's deliveries (another company's → WEBHOOK_DELIVERY_NOT_FOUND). */
export class GetDelivery {
  constructor(private readonly deps: WebhookDeps) {}

  execute(companyId: string | undefined, id: string): Promise<DeliveryRow> {
    return deliveryOf(this.deps, requireCompany(companyId), id);
  }
}
