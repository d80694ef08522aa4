import { invalidRequest, type FieldProblem } from '@wallet/platform';
import { PLATFORM_TENANT } from '../domain/event-types.js';
import type { WebhookDeps } from './deps.js';
import { requireCompany } from './webhook-checks.js';
import type { DeliveryRow } from './ports.js';

const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;

export interface DeliveryQuery {
  endpointId?: string;
  status?: string;
  cursor?: string;
  limit?: number;
}

/**
 * A page of the tenant's delivery log, newest first (limit 1–200, default 50). The cursor is opaque
 * to callers: base64url of `s:<seq>`, the last delivery of the previous page.
 */
export class ListDeliveries {
  constructor(private readonly deps: WebhookDeps) {}

  execute(companyId: string | undefined, f: DeliveryQuery): Promise<{ items: DeliveryRow[]; nextCursor?: string }> {
    return this.list(requireCompany(companyId), f);
  }

  forPlatform(f: DeliveryQuery): Promise<{ items: DeliveryRow[]; nextCursor?: string }> {
    return this.list(PLATFORM_TENANT, f);
  }

  private async list(cid: string, f: DeliveryQuery): Promise<{ items: DeliveryRow[]; nextCursor?: string }> {
    const problems: FieldProblem[] = [];
    const limit = f.limit && f.limit > 0 ? f.limit : 50;
    if (limit > 200) problems.push({ path: 'limit', message: 'Debe estar entre 1 y 200.' });
    if (f.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(f.status))
      problems.push({ path: 'status', message: 'Debe ser PENDING, SUCCEEDED o FAILED.' });
    let beforeSeq: string | undefined;
    if (f.cursor !== undefined) {
      const decoded = Buffer.from(f.cursor, 'base64url').toString('utf8');
      if (!/^s:\d{1,19}$/.test(decoded)) problems.push({ path: 'cursor', message: 'El cursor no es válido.' });
      else beforeSeq = decoded.slice(2);
    }
    if (problems.length > 0) throw invalidRequest(problems);
    const rows = await this.deps.store.listDeliveries(cid, {
      ...(f.endpointId ? { endpointId: f.endpointId } : {}),
      ...(f.status ? { status: f.status } : {}),
      ...(beforeSeq ? { beforeSeq } : {}),
      limit: limit + 1,
    });
    const items = rows.slice(0, limit);
    return { items, ...(rows.length > limit ? { nextCursor: Buffer.from(`s:${items[items.length - 1]!.seq}`).toString('base64url') } : {}) };
  }
}
