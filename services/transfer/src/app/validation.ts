import { AppError, Problems, invalidRequest } from '@wallet/platform';

/** The request-problem collector (one implementation, in services/platform). */
export { Problems };

/** Same shape as the ledger's company ids (the gateway's UUIDs fit). */
const COMPANY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: string): boolean => UUID.test(v);

/** The company the caller acts for, from `x-company-id` metadata only (ARCHITECTURE rule 5). */
export function requireCompany(companyId: string | undefined): string {
  if (!companyId) throw new AppError('AUTH_REQUIRED', 'Falta la empresa de la llamada (metadato x-company-id).');
  if (!COMPANY_ID.test(companyId)) throw invalidRequest([{ path: 'x-company-id', message: 'is not a valid company id' }]);
  return companyId;
}

/** Text length in Unicode code points (CONTRACT §9). */
export const codePoints = (v: string): number => [...v].length;

/** Empty strings mean "not given": proto3 cannot tell them apart on every client. */
export function orNull(v: string | null | undefined): string | null {
  return v == null || v === '' ? null : v;
}

export function checkText(p: Problems, path: string, v: string | null, opts: { min?: number; max: number; required?: boolean }): void {
  if (v == null || v.trim() === '') {
    if (opts.required) p.add(path, 'is required');
    return;
  }
  const n = codePoints(v);
  if (opts.min !== undefined && n < opts.min) p.add(path, `must be at least ${opts.min} characters`);
  if (n > opts.max) p.add(path, `must be at most ${opts.max} characters`);
}

/** A listing's cursor: base64url of `<createdAt ISO>|<id>` of the last item of the previous page. */
export function encodeTimeCursor(last: { createdAt: Date; id: string }): string {
  return Buffer.from(`${last.createdAt.toISOString()}|${last.id}`).toString('base64url');
}

/** The cursor `encodeTimeCursor` made, or a `cursor` problem added to `p` (undefined). */
export function decodeTimeCursor(p: Problems, c: string, idOk: (id: string) => boolean): { createdAt: Date; id: string } | undefined {
  const [at, id] = Buffer.from(c, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (!id || !idOk(id) || Number.isNaN(createdAt.getTime())) {
    p.add('cursor', 'No es un cursor de este listado.');
    return undefined;
  }
  return { createdAt, id };
}
