import { AppError } from '@wallet/platform';
import { isDepositId, statusFilter, type DepositRecord, type DepositSource } from '../domain/deposit.js';
import { Problems } from '../domain/validation.js';
import type { DepositDeps } from './deps.js';
import type { ListCursor, ListFilter } from './ports.js';

export interface ListQuery {
  status?: string | undefined;
  rail?: string | undefined;
  externalId?: string | undefined;
  brebKeyId?: string | undefined;
  page: number;
  limit: number;
  cursorMode: boolean;
  cursor?: string | undefined;
}

export interface DepositPage {
  deposits: DepositRecord[];
  /** The clock the page was read with (statuses are shown as of it). */
  at: Date;
  total: number;
  page: number;
  limit: number;
  totalPages: number;
  nextCursor: string | null;
}

export const encodeCursor = (c: ListCursor): string => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');

export function decodeCursor(s: string): ListCursor | null {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && !Number.isNaN(Date.parse(v[0])) && v[1].length <= 40)
      return { createdAt: v[0], id: v[1] };
  } catch {
    /* invalid */
  }
  return null;
}

/**
 * GET /deposits (§4.9, CONTRACT §2): the company's deposits (PSE and Bre-B, the latter fed by the
 * collect-key service's events, see breb-listing.ts) newest first (created_at desc, id desc). Page style (page/limit + totals) or,
 * when the `cursor` parameter was present, cursor style (opaque cursor → nextCursor).
 */
export class ListDeposits {
  constructor(private readonly deps: DepositDeps) {}

  async execute(companyId: string | undefined, q: ListQuery): Promise<DepositPage> {
    if (!companyId) throw new AppError('AUTH_REQUIRED');
    const p = new Problems();
    const f: ListFilter = {};
    if (q.status) {
      const s = statusFilter(q.status);
      if (s) f.status = s;
      else p.add('status', 'Debe ser PENDING_CONFIRM, ASSIGNED (o PAID), FAILED, EXPIRED, UNASSIGNED o REVERSED.');
    }
    if (q.rail) {
      const r = q.rail.trim().toUpperCase();
      if (r === 'PSE' || r === 'BREB') f.source = r as DepositSource;
      else p.add('rail', 'Debe ser PSE o BREB.');
    }
    if (q.externalId) {
      if (q.externalId.length > 64) p.add('externalId', 'Debe tener a lo sumo 64 caracteres.');
      else f.externalId = q.externalId;
    }
    if (q.brebKeyId) {
      if (q.brebKeyId.length > 64) p.add('brebKeyId', 'Debe tener a lo sumo 64 caracteres.');
      else f.brebKeyId = q.brebKeyId;
    }
    const limit = q.limit === 0 ? 20 : q.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) p.add('limit', 'Debe estar entre 1 y 100.');
    if (!Number.isInteger(q.page) || q.page < 0 || q.page > 1_000_000) p.add('page', 'Debe ser un número entero desde 0.');
    let after: ListCursor | undefined;
    if (q.cursorMode && q.cursor) {
      const c = decodeCursor(q.cursor);
      if (c) after = c;
      else p.add('cursor', 'No es un cursor de este listado.');
    }
    p.throwIfAny();

    const now = this.deps.now();
    if (q.cursorMode) {
      const r = await this.deps.store.list(companyId, f, { limit, offset: 0, ...(after ? { after } : {}), withTotal: false, now });
      const last = r.items[r.items.length - 1];
      return {
        deposits: await this.withCobros(r.items),
        at: now,
        total: 0,
        page: 0,
        limit,
        totalPages: 0,
        nextCursor: r.hasMore && last ? encodeCursor(last.cursor) : null,
      };
    }
    const r = await this.deps.store.list(companyId, f, { limit, offset: q.page * limit, withTotal: true, now });
    const total = r.total ?? 0;
    return { deposits: await this.withCobros(r.items), at: now, total, page: q.page, limit, totalPages: Math.ceil(total / limit), nextCursor: null };
  }

  /** Each payment of the page with the cobro it was matched to (one read for the page). */
  private async withCobros<D extends DepositRecord>(items: D[]): Promise<D[]> {
    if (items.length === 0) return items;
    const matched = await this.deps.store.matchedCobros(items.map((d) => d.id));
    return items.map((d) => (matched.has(d.id) ? { ...d, matchedCobroId: matched.get(d.id)! } : d));
  }
}

export class GetDeposit {
  constructor(private readonly deps: DepositDeps) {}

  async execute(companyId: string | undefined, id: string): Promise<DepositRecord> {
    if (!companyId) throw new AppError('AUTH_REQUIRED');
    const d = isDepositId(id) ? await this.deps.store.get(companyId, id) : undefined;
    if (!d) throw new AppError('DEPOSIT_NOT_FOUND');
    return d;
  }
}
