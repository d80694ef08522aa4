import { AppError, type FieldProblem } from '@wallet/platform';
import { WEBHOOK_EVENT_TYPES } from '../domain/event-types.js';
import type { WebhookDeps } from './deps.js';
import { TargetRefused, type DeliveryRow, type EndpointRow } from './ports.js';

/** Checks and reads the endpoint and delivery-log use cases share. */

/** Every company-scoped call names its company; none can name the platform's tenant (a company id is never empty). */
export function requireCompany(companyId: string | undefined): string {
  if (!companyId) throw new AppError('AUTH_REQUIRED');
  return companyId;
}

/** An endpoint URL: its length and the target rules (DNS too under production rules). */
export async function checkUrl(deps: WebhookDeps, url: string, problems: FieldProblem[]): Promise<void> {
  if (url.length > 2048) {
    problems.push({ path: 'url', message: 'Debe tener como máximo 2048 caracteres.' });
    return;
  }
  try {
    const parsed = deps.targets.checkShape(url);
    if (deps.targets.strict) await deps.targets.resolve(parsed);
  } catch (err) {
    if (err instanceof TargetRefused) problems.push({ path: 'url', message: err.reason });
    else throw err;
  }
}

/** A company subscribes to the product's event types; a platform endpoint to the platform's only. */
export function checkEvents(events: string[], problems: FieldProblem[], types: readonly string[] = WEBHOOK_EVENT_TYPES): string[] {
  if (events.length === 0) problems.push({ path: 'events', message: 'Suscriba al menos un tipo de evento.' });
  events.forEach((e, i) => {
    if (!types.includes(e)) problems.push({ path: `events.${i}`, message: `Tipo de evento desconocido; use uno de: ${types.join(', ')}.` });
  });
  return [...new Set(events)];
}

export function checkDescription(d: string | undefined, problems: FieldProblem[]): void {
  if (d !== undefined && d.length > 200) problems.push({ path: 'description', message: 'Debe tener como máximo 200 caracteres.' });
}

/** The tenant's live endpoint; another tenant's reads as absent. */
export async function endpointOf(deps: WebhookDeps, companyId: string, id: string): Promise<EndpointRow> {
  const e = await deps.store.getEndpoint(companyId, id);
  if (!e) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
  return e;
}

/** The tenant's delivery; another tenant's reads as absent. */
export async function deliveryOf(deps: WebhookDeps, companyId: string, id: string): Promise<DeliveryRow> {
  const dl = await deps.store.getDelivery(companyId, id);
  if (!dl) throw new AppError('WEBHOOK_DELIVERY_NOT_FOUND');
  return dl;
}
