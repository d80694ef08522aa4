import { AppError, formatInstant } from '@wallet/platform';
import { PING_EVENT_TYPE, PLATFORM_TENANT } from '../domain/event-types.js';
import type { WebhookDeps } from './deps.js';
import { endpointOf, requireCompany } from './webhook-checks.js';
import type { DeliveryRow } from './ports.js';

/** A `webhook.ping` delivery to an enabled endpoint, whatever its subscription; the worker is woken. */
export class TestEndpoint {
  constructor(private readonly deps: WebhookDeps) {}

  execute(companyId: string | undefined, id: string): Promise<DeliveryRow> {
    return this.ping(requireCompany(companyId), id);
  }

  forPlatform(id: string): Promise<DeliveryRow> {
    return this.ping(PLATFORM_TENANT, id);
  }

  private async ping(cid: string, id: string): Promise<DeliveryRow> {
    const e = await endpointOf(this.deps, cid, id);
    if (!e.enabled) throw new AppError('INVALID_STATE_TRANSITION', 'El endpoint está deshabilitado; habilítelo para enviarle eventos de prueba.');
    const delivery = await this.deps.store.createPing(cid, e.id, (eventId, createdAt) =>
      JSON.stringify({
        id: eventId,
        type: PING_EVENT_TYPE,
        createdAt: formatInstant(createdAt),
        data: { endpointId: e.id, url: e.url },
      }),
    );
    this.deps.worker.nudge();
    return delivery;
  }
}
