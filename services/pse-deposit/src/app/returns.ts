import { CreateDepositReturn, ListDepositReturns, ReturnSaga, type ReturnDeps, type ReturnablePayments } from '@wallet/platform';
import { ledgerKeys } from '../domain/deposit.js';
import type { DepositDeps } from './deps.js';

/**
 * Refunds (devoluciones) of paid PSE deposits (docs/returns.md): the shared return saga
 * (`@wallet/platform` returns) over this service's PSE deposits, the ledger's return holds on the ACH
 * wallet and the PSE provider's refund (`POST /pse/refunds`, refundId = the return's id).
 */
export function pseReturns(deps: DepositDeps) {
  const returnDeps: ReturnDeps = {
    returns: deps.returns,
    subjects: { returned: 'deposit.returned', failed: 'deposit.return_failed' },
    ledger: deps.ledger,
    rail: { name: 'PSE', send: (r) => deps.pse.refund({ refundId: r.id, depositId: r.depositId, amountCents: r.amount }) },
    log: deps.log,
    now: deps.now,
    newId: deps.newId,
  };
  const payments: ReturnablePayments = {
    idPattern: /^dep_[a-z0-9]{24}$/,
    companyOf: async (depositId) => {
      const d = await deps.store.getById(depositId);
      return d?.source === 'PSE' ? d.companyId : undefined;
    },
    // The hint is the deposit's id: its credit is `deposit:<id>:paid`.
    inflowKey: (p) => ledgerKeys.paid(p.hint!),
    notReturnable: (status) =>
      status === 'REVERSED' || status === 'REVERSING'
        ? 'El proveedor ya reversó este pago; no se puede devolver.'
        : `Solo un pago acreditado (ASSIGNED) puede devolverse; este está en ${status}.`,
  };
  const saga = new ReturnSaga(returnDeps);
  return { saga, create: new CreateDepositReturn(returnDeps, saga, payments), list: new ListDepositReturns(deps.returns, payments) };
}

/** pse_deposit's returns table (migration 0011) and how its PSE deposits read for a return. */
export const PSE_RETURNS = {
  schema: 'pse_deposit',
  returns: 'deposit_returns',
  history: 'deposit_return_history',
  payments: {
    table: 'deposits',
    id: 'id',
    scope: "p.source = 'PSE'",
    returnable: "p.status = 'ASSIGNED'",
    providerId: 'p.provider_transfer_id',
    payerName: "coalesce(p.payer_name, nullif(concat_ws(' ', p.payer_first_name, p.payer_last_name), ''))",
    payerDocument: 'p.payer_document_number',
    payerBank: 'p.payer_bank',
    inflowHint: 'p.id',
  },
} as const;
