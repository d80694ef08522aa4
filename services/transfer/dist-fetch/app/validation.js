import { AppError, invalidRequest } from '@wallet/platform';
/** Collects every problem of a request, then fails once with all of them (400 INVALID_REQUEST). */
export class Problems {
    list = [];
    add(path, message) {
        this.list.push({ path, message });
        return this;
    }
    get empty() {
        return this.list.length === 0;
    }
    throwIfAny() {
        if (this.list.length > 0)
            throw invalidRequest(this.list);
    }
}
/** Same shape as the ledger's company ids (the gateway's UUIDs fit). */
const COMPANY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v) => UUID.test(v);
/** The company the caller acts for, from `x-company-id` metadata only (ARCHITECTURE rule 5). */
export function requireCompany(companyId) {
    if (!companyId)
        throw new AppError('AUTH_REQUIRED', 'Falta la empresa de la llamada (metadato x-company-id).');
    if (!COMPANY_ID.test(companyId))
        throw invalidRequest([{ path: 'x-company-id', message: 'is not a valid company id' }]);
    return companyId;
}
/** Text length in Unicode code points (CONTRACT §9). */
export const codePoints = (v) => [...v].length;
/** Empty strings mean "not given": proto3 cannot tell them apart on every client. */
export function orNull(v) {
    return v == null || v === '' ? null : v;
}
export function checkText(p, path, v, opts) {
    if (v == null || v.trim() === '') {
        if (opts.required)
            p.add(path, 'is required');
        return;
    }
    const n = codePoints(v);
    if (opts.min !== undefined && n < opts.min)
        p.add(path, `must be at least ${opts.min} characters`);
    if (n > opts.max)
        p.add(path, `must be at most ${opts.max} characters`);
}
//# sourceMappingURL=validation.js.map