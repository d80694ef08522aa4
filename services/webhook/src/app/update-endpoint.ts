import { AppError, invalidRequest, type FieldProblem } from '@wallet/platform';
import type { WebhookDeps } from './deps.js';
import { checkDescription, checkEvents, checkUrl, endpointOf, requireCompany } from './webhook-checks.js';
import type { EndpointPatch, EndpointRow } from './ports.js';

/**
 * Changes a company's endpoint: the fields given, checked as on creation. Enabling it wakes the
 * worker, which then sends the deliveries that waited while it was disabled.
 */
export class UpdateEndpoint {
  constructor(private readonly deps: WebhookDeps) {}

  async execute(companyId: string | undefined, id: string, p: EndpointPatch): Promise<EndpointRow> {
    const cid = requireCompany(companyId);
    await endpointOf(this.deps, cid, id);
    const problems: FieldProblem[] = [];
    if (p.url !== undefined) await checkUrl(this.deps, p.url, problems);
    const events = p.events !== undefined ? checkEvents(p.events, problems) : undefined;
    checkDescription(p.description ?? undefined, problems);
    if (problems.length > 0) throw invalidRequest(problems);
    const updated = await this.deps.store.updateEndpoint(cid, id, { ...p, ...(events ? { events } : {}) });
    if (!updated) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
    if (p.enabled === true) this.deps.worker.nudge();
    return updated;
  }
}
