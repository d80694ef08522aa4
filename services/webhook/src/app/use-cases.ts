import { AppError, invalidRequest, type FieldProblem, type SecretBox, formatInstant } from '@wallet/platform';
import { PING_EVENT_TYPE, PLATFORM_EVENT_TYPES, PLATFORM_TENANT, WEBHOOK_EVENT_TYPES } from '../domain/event-types.js';
import { newSigningSecret } from '../domain/secrets.js';
import { TargetRefused, checkUrlShape, resolveTarget, type Resolver, type TargetRules } from '../adapters/target.js';
import { newEndpointId, type DeliveryRow, type EndpointRow, type WebhookStore } from '../persistence/webhook.store.js';

export const DEFAULT_OVERLAP_SECONDS = 86_400;
export const MAX_OVERLAP_SECONDS = 7 * 86_400;
export const MAX_ENDPOINTS_PER_COMPANY = 20;
const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;

export interface WebhookUseCaseDeps {
  store: WebhookStore;
  secrets: SecretBox;
  rules: TargetRules;
  resolver: Resolver;
  /** New deliveries were committed: wake the worker. */
  nudge(): void;
}

function company(companyId: string | undefined): string {
  if (!companyId) throw new AppError('AUTH_REQUIRED');
  return companyId;
}

/** Endpoint management and the delivery log; every call is scoped to the caller's company. */
export function webhookUseCases(deps: WebhookUseCaseDeps) {
  const { store, secrets } = deps;

  async function checkUrl(url: string, problems: FieldProblem[]): Promise<void> {
    if (url.length > 2048) { problems.push({ path: 'url', message: 'Debe tener como máximo 2048 caracteres.' }); return; }
    try {
      const parsed = checkUrlShape(url, deps.rules);
      if (deps.rules.strict) await resolveTarget(parsed, deps.rules, deps.resolver);
    } catch (err) {
      if (err instanceof TargetRefused) problems.push({ path: 'url', message: err.reason });
      else throw err;
    }
  }

  /** A company subscribes to the product's event types; a platform endpoint to the platform's only. */
  function checkEvents(events: string[], problems: FieldProblem[], types: readonly string[] = WEBHOOK_EVENT_TYPES): string[] {
    if (events.length === 0) problems.push({ path: 'events', message: 'Suscriba al menos un tipo de evento.' });
    events.forEach((e, i) => {
      if (!types.includes(e)) problems.push({ path: `events.${i}`, message: `Tipo de evento desconocido; use uno de: ${types.join(', ')}.` });
    });
    return [...new Set(events)];
  }

  function checkDescription(d: string | undefined, problems: FieldProblem[]): void {
    if (d !== undefined && d.length > 200) problems.push({ path: 'description', message: 'Debe tener como máximo 200 caracteres.' });
  }

  async function endpointOf(companyId: string, id: string): Promise<EndpointRow> {
    const e = await store.getEndpoint(companyId, id);
    if (!e) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
    return e;
  }

  async function deliveryOf(companyId: string, id: string): Promise<DeliveryRow> {
    const dl = await store.getDelivery(companyId, id);
    if (!dl) throw new AppError('WEBHOOK_DELIVERY_NOT_FOUND');
    return dl;
  }

  async function create(cid: string, types: readonly string[], r: { url: string; events: string[]; enabled?: boolean; description?: string }): Promise<{ endpoint: EndpointRow; secret: string }> {
    const problems: FieldProblem[] = [];
    await checkUrl(r.url, problems);
    const events = checkEvents(r.events, problems, types);
    checkDescription(r.description, problems);
    if (problems.length > 0) throw invalidRequest(problems);
    if ((await store.listEndpoints(cid)).length >= MAX_ENDPOINTS_PER_COMPANY) {
      throw invalidRequest([{ path: 'url', message: cid === PLATFORM_TENANT
        ? `Se permiten como máximo ${MAX_ENDPOINTS_PER_COMPANY} endpoints de plataforma.`
        : `Se permiten como máximo ${MAX_ENDPOINTS_PER_COMPANY} endpoints por empresa.` }]);
    }
    const secret = newSigningSecret();
    const endpoint = await store.insertEndpoint({
      id: newEndpointId(), companyId: cid, url: r.url, description: r.description ?? null, events, enabled: r.enabled ?? true, secretSealed: secrets.seal(secret),
    });
    return { endpoint, secret };
  }

  /** A `webhook.ping` delivery to the endpoint, whatever its subscription. */
  async function ping(cid: string, id: string): Promise<DeliveryRow> {
    const e = await endpointOf(cid, id);
    if (!e.enabled) throw new AppError('INVALID_STATE_TRANSITION', 'El endpoint está deshabilitado; habilítelo para enviarle eventos de prueba.');
    const delivery = await store.createPing(cid, e.id, (eventId, createdAt) => JSON.stringify({
      id: eventId, type: PING_EVENT_TYPE, createdAt: formatInstant(createdAt), data: { endpointId: e.id, url: e.url },
    }));
    deps.nudge();
    return delivery;
  }

  async function deliveries(cid: string, f: { endpointId?: string; status?: string; cursor?: string; limit?: number }): Promise<{ items: DeliveryRow[]; nextCursor?: string }> {
    const problems: FieldProblem[] = [];
    const limit = f.limit && f.limit > 0 ? f.limit : 50;
    if (limit > 200) problems.push({ path: 'limit', message: 'Debe estar entre 1 y 200.' });
    if (f.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(f.status)) problems.push({ path: 'status', message: 'Debe ser PENDING, SUCCEEDED o FAILED.' });
    let beforeSeq: string | undefined;
    if (f.cursor !== undefined) {
      const decoded = Buffer.from(f.cursor, 'base64url').toString('utf8');
      if (!/^s:\d{1,19}$/.test(decoded)) problems.push({ path: 'cursor', message: 'El cursor no es válido.' });
      else beforeSeq = decoded.slice(2);
    }
    if (problems.length > 0) throw invalidRequest(problems);
    const rows = await store.listDeliveries(cid, { ...(f.endpointId ? { endpointId: f.endpointId } : {}), ...(f.status ? { status: f.status } : {}), ...(beforeSeq ? { beforeSeq } : {}), limit: limit + 1 });
    const items = rows.slice(0, limit);
    return { items, ...(rows.length > limit ? { nextCursor: Buffer.from(`s:${items[items.length - 1]!.seq}`).toString('base64url') } : {}) };
  }

  return {
    async createEndpoint(companyId: string | undefined, r: { url: string; events: string[]; enabled?: boolean; description?: string }): Promise<{ endpoint: EndpointRow; secret: string }> {
      return create(company(companyId), WEBHOOK_EVENT_TYPES, r);
    },

    async listEndpoints(companyId: string | undefined): Promise<EndpointRow[]> {
      return store.listEndpoints(company(companyId));
    },

    async getEndpoint(companyId: string | undefined, id: string): Promise<EndpointRow> {
      return endpointOf(company(companyId), id);
    },

    async updateEndpoint(companyId: string | undefined, id: string, p: { url?: string; events?: string[]; enabled?: boolean; description?: string | null }): Promise<EndpointRow> {
      const cid = company(companyId);
      await endpointOf(cid, id);
      const problems: FieldProblem[] = [];
      if (p.url !== undefined) await checkUrl(p.url, problems);
      const events = p.events !== undefined ? checkEvents(p.events, problems) : undefined;
      checkDescription(p.description ?? undefined, problems);
      if (problems.length > 0) throw invalidRequest(problems);
      const updated = await store.updateEndpoint(cid, id, { ...p, ...(events ? { events } : {}) });
      if (!updated) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
      if (p.enabled === true) deps.nudge();
      return updated;
    },

    async deleteEndpoint(companyId: string | undefined, id: string): Promise<void> {
      if (!(await store.deleteEndpoint(company(companyId), id))) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
    },

    async rotateSecret(companyId: string | undefined, id: string, overlapSeconds: number | undefined): Promise<{ endpoint: EndpointRow; secret: string }> {
      const cid = company(companyId);
      const overlap = overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
      if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS) {
        throw invalidRequest([{ path: 'overlapSeconds', message: `Debe ser un entero entre 0 y ${MAX_OVERLAP_SECONDS}.` }]);
      }
      const secret = newSigningSecret();
      const endpoint = await store.rotateSecret(cid, id, secrets.seal(secret), overlap);
      if (!endpoint) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
      return { endpoint, secret };
    },

    /** A `webhook.ping` delivery to the endpoint, whatever its subscription. */
    async testEndpoint(companyId: string | undefined, id: string): Promise<DeliveryRow> {
      return ping(company(companyId), id);
    },

    async listDeliveries(companyId: string | undefined, f: { endpointId?: string; status?: string; cursor?: string; limit?: number }): Promise<{ items: DeliveryRow[]; nextCursor?: string }> {
      return deliveries(company(companyId), f);
    },

    async getDelivery(companyId: string | undefined, id: string): Promise<DeliveryRow> {
      return deliveryOf(company(companyId), id);
    },

    /** Sends the same event (same id and body) to the same endpoint again, as a new delivery. */
    async replayDelivery(companyId: string | undefined, id: string): Promise<DeliveryRow> {
      const cid = company(companyId);
      const original = await deliveryOf(cid, id);
      await endpointOf(cid, original.endpointId);
      const replay = await store.replay(cid, original);
      deps.nudge();
      return replay;
    },

    // Platform endpoints (operators, issue 21): the platform's events (reconciliation.completed,
    // reconciliation.break) delivered by the same worker, signed the same way. No company: the tenant
    // is PLATFORM_TENANT, which no company-scoped call can name.
    createPlatformEndpoint(r: { url: string; events: string[]; enabled?: boolean; description?: string }): Promise<{ endpoint: EndpointRow; secret: string }> {
      return create(PLATFORM_TENANT, PLATFORM_EVENT_TYPES, r);
    },
    listPlatformEndpoints(): Promise<EndpointRow[]> {
      return store.listEndpoints(PLATFORM_TENANT);
    },
    async deletePlatformEndpoint(id: string): Promise<void> {
      if (!(await store.deleteEndpoint(PLATFORM_TENANT, id))) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
    },
    testPlatformEndpoint(id: string): Promise<DeliveryRow> {
      return ping(PLATFORM_TENANT, id);
    },
    listPlatformDeliveries(f: { endpointId?: string; status?: string; cursor?: string; limit?: number }): Promise<{ items: DeliveryRow[]; nextCursor?: string }> {
      return deliveries(PLATFORM_TENANT, f);
    },
  };
}

export type WebhookUseCases = ReturnType<typeof webhookUseCases>;
