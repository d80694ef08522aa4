import type { CallContext } from '@wallet/platform';

/**
 * The call context of an operator acting on one company (a route such as /admin/companies/{id}/…):
 * the company goes into the principal the services verify, not only beside it.
 */
export function actingOn(call: CallContext, companyId: string): CallContext {
  const p = call.principal;
  return { ...call, companyId, ...(p?.kind === 'admin' ? { principal: { ...p, companyId } } : {}) };
}
