import { compareInstants, isInstant, parseInstant } from '@wallet/platform';
import { isMovementType, type Movement, type MovementType } from '../domain/movements.js';
import type { MovementRail } from '../domain/rails.js';
import type { LedgerDeps } from './deps.js';
import type { MovementCursor, MovementFilter } from './ports.js';
import { Problems, isUuid, requireCompany } from './validation.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface ListMovementsCommand {
  type?: string;
  rail?: string;
  from?: string;
  to?: string;
  page: number;
  limit: number;
  cursor?: string;
}

export interface MovementList {
  items: Movement[];
  nextCursor: string | null;
  hasMore: boolean;
}

/**
 * The company's movements, newest first, ties by id (descending). Page-based (`page`, 0-based) or,
 * when `cursor` is given, keyset-based after that position (the cursor wins over the page).
 * `nextCursor` is set exactly when `hasMore`.
 */
export class ListMovements {
  constructor(private readonly deps: LedgerDeps) {}

  async execute(caller: string | undefined, cmd: ListMovementsCommand): Promise<MovementList> {
    const companyId = requireCompany(caller);
    const p = new Problems();
    const filter: MovementFilter = {};
    if (cmd.type !== undefined && cmd.type !== '' && cmd.type !== 'UNSPECIFIED') {
      if (isMovementType(cmd.type)) filter.type = cmd.type as MovementType;
      else p.add('type', 'Debe ser TRANSFER_OUT, TRANSFER_IN, FEE_CHARGE o BALANCE_ADD.');
    }
    if (cmd.rail !== undefined && cmd.rail !== '' && cmd.rail !== 'UNSPECIFIED') {
      if (cmd.rail === 'BREB' || cmd.rail === 'ACH' || cmd.rail === 'PSE') filter.rail = cmd.rail as MovementRail;
      else p.add('rail', 'Debe ser BREB, ACH o PSE.');
    }
    // Instants at microsecond precision, compared in Postgres as given: [from, to] holds a movement
    // whose createdAt is either bound.
    for (const k of ['from', 'to'] as const) {
      const v = cmd[k];
      if (v === undefined || v === '') continue;
      const i = parseInstant(v);
      if (i) filter[k] = i;
      else p.add(k, 'Debe ser un instante RFC 3339 con zona horaria.');
    }
    if (filter.from && filter.to && compareInstants(filter.from, filter.to) > 0) p.add('from', 'No puede ser posterior a to.');
    const limit = cmd.limit === 0 ? DEFAULT_PAGE_SIZE : cmd.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) p.add('limit', `Debe estar entre 1 y ${MAX_PAGE_SIZE}.`);
    if (!Number.isInteger(cmd.page) || cmd.page < 0) p.add('page', 'Debe ser 0 o más.');
    let after: MovementCursor | undefined;
    if (cmd.cursor) {
      after = decodeCursor(cmd.cursor);
      if (!after) p.add('cursor', 'No es un cursor de este listado.');
    }
    p.throwIfAny();

    const page = await this.deps.store.listMovements(companyId, filter, {
      limit,
      offset: after ? 0 : cmd.page * limit,
      ...(after ? { after } : {}),
    });
    const last = page.items[page.items.length - 1];
    return {
      items: page.items.map(({ cursor: _c, ...m }) => m),
      hasMore: page.hasMore,
      nextCursor: page.hasMore && last ? encodeCursor(last.cursor) : null,
    };
  }
}

/** Opaque to clients: base64url of the last item's (created_at with microseconds, id). */
export function encodeCursor(c: MovementCursor): string {
  return Buffer.from(JSON.stringify([c.createdAt, c.id]), 'utf8').toString('base64url');
}

export function decodeCursor(s: string): MovementCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(s)) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && isInstant(v[0]) && isUuid(v[1])) {
      return { createdAt: v[0], id: v[1] };
    }
  } catch {
    /* not JSON */
  }
  return undefined;
}
