import { CreateEndpoint } from './create-endpoint.js';
import { DeleteEndpoint } from './delete-endpoint.js';
import type { WebhookDeps } from './deps.js';
import { GetDelivery } from './get-delivery.js';
import { GetEndpoint } from './get-endpoint.js';
import { ListDeliveries } from './list-deliveries.js';
import { ListEndpoints } from './list-endpoints.js';
import { ReplayDelivery } from './replay-delivery.js';
import { RotateSecret } from './rotate-secret.js';
import { TestEndpoint } from './test-endpoint.js';
import { UpdateEndpoint } from './update-endpoint.js';

/**
 * Endpoint management and the delivery log, built once from the same ports. Every `execute` is
 * scoped to the caller's company; `forPlatform` serves the operators' endpoints (docs/webhooks.md
 * "Operators' webhooks"), whose tenant is PLATFORM_TENANT, which no company-scoped call can name.
 */
export function webhookUseCases(deps: WebhookDeps) {
  return {
    createEndpoint: new CreateEndpoint(deps),
    listEndpoints: new ListEndpoints(deps),
    getEndpoint: new GetEndpoint(deps),
    updateEndpoint: new UpdateEndpoint(deps),
    deleteEndpoint: new DeleteEndpoint(deps),
    rotateSecret: new RotateSecret(deps),
    testEndpoint: new TestEndpoint(deps),
    listDeliveries: new ListDeliveries(deps),
    getDelivery: new GetDelivery(deps),
    replayDelivery: new ReplayDelivery(deps),
  };
}
export type WebhookUseCases = ReturnType<typeof webhookUseCases>;
