import type { WebhookDeps } from './deps.js';
import { deliveryOf, endpointOf, requireCompany } from './webhook-checks.js';
import type { DeliveryRow } from './ports.js';

/** Sends the same event (same id and body) to the same live endpoint again, as a new delivery; the worker is woken. */
export class ReplayDelivery {
  constructor(private readonly deps: WebhookDeps) {}

  async execute(companyId: string | undefined, id: string): Promise<DeliveryRow> {
    const cid = requireCompany(companyId);
    const original = await deliveryOf(this.deps, cid, id);
    await endpointOf(this.deps, cid, original.endpointId);
    const replay = await this.deps.store.replay(cid, original);
    this.deps.worker.nudge();
    return replay;
  }
}
