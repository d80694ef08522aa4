import { AppError, invalidRequest, type FieldProblem } from '@wallet/platform';
import { PLATFORM_EVENT_TYPES, PLATFORM_TENANT, WEBHOOK_EVENT_TYPES } from '../domain/event-types.js';
import { newEndpointId } from '../domain/ids.js';
import { newSigningSecret } from '../domain/secrets.js';
import type { WebhookDeps } from './deps.js';
import { checkDescription, checkEvents, checkUrl, requireCompany } from './webhook-checks.js';
import type { EndpointRow } from './ports.js';

export const MAX_ENDPOINTS_PER_COMPANY = 20;

export interface CreateEndpointRequest {
  url: string;
  events: string[];
  enabled?: boolean;
  description?: string;
}

/**
 * Registers an endpoint with a new signing secret, returned only here (and by RotateSecret): every
 * bad field in one answer (URL and target rules, event types, description), then at most
 * MAX_ENDPOINTS_PER_COMPANY live endpoints per tenant.
 */
export class CreateEndpoint {
  constructor(private readonly deps: WebhookDeps) {}

  /** A company's endpoint, subscribed to the product's event types. */
  execute(companyId: string | undefined, r: CreateEndpointRequest): Promise<{ endpoint: EndpointRow; secret: string }> {
    return this.create(requireCompany(companyId), WEBHOOK_EVENT_TYPES, r);
  }

  /** An operators' endpoint (docs/webhooks.md "Operators' webhooks"), subscribed to the platform's event types only. */
  forPlatform(r: CreateEndpointRequest): Promise<{ endpoint: EndpointRow; secret: string }> {
    return this.create(PLATFORM_TENANT, PLATFORM_EVENT_TYPES, r);
  }

  private async create(cid: string, types: readonly string[], r: CreateEndpointRequest): Promise<{ endpoint: EndpointRow; secret: string }> {
    const { store, secrets } = this.deps;
    const problems: FieldProblem[] = [];
    await checkUrl(this.deps, r.url, problems);
    const events = checkEvents(r.events, problems, types);
    checkDescription(r.description, problems);
    if (problems.length > 0) throw invalidRequest(problems);
    const secret = newSigningSecret();
    const endpoint = await store.insertEndpoint(
      {
        id: newEndpointId(),
        companyId: cid,
        url: r.url,
        description: r.description ?? null,
        events,
        enabled: r.enabled ?? true,
        secretSealed: secrets.seal(secret),
      },
      MAX_ENDPOINTS_PER_COMPANY,
    );
    if (!endpoint) {
      throw new AppError(
        'WEBHOOK_ENDPOINT_LIMIT_REACHED',
        cid === PLATFORM_TENANT
          ? `Se permiten como máximo ${MAX_ENDPOINTS_PER_COMPANY} endpoints de plataforma; elimine uno antes de crear otro.`
          : `Se permiten como máximo ${MAX_ENDPOINTS_PER_COMPANY} endpoints por empresa; elimine uno antes de crear otro.`,
        { limit: MAX_ENDPOINTS_PER_COMPANY },
      );
    }
    return { endpoint, secret };
  }
}
