import { CreateDepositReturn, ListDepositReturns, ReturnSaga, type ReturnDeps, type ReturnRail, type ReturnablePayments } from '@wallet/platform';
import { creditLedgerKey } from '../domain/incoming-payment.js';
import type { CollectKeyDeps } from './deps.js';

/**
 * Returns (devoluciones) of credited Bre-B payments (docs/returns.md): the shared return saga
 * (`@wallet/platform` returns) over this service's payments, the ledger's return holds and the
 * network's return (`POST /breb/network/returns`, returnId = the return's id).
 */
export function collectKeyReturns(deps: CollectKeyDeps) {
  const rail: ReturnRail = {
    name: 'BREB',
    send: (r) => deps.directory.returnPayment({ returnId: r.id, providerTransferId: r.providerTransferId, amountCents: r.amount }),
  };
  const returnDeps: ReturnDeps = {
    returns: deps.returns,
    subjects: { returned: 'deposit.returned', failed: 'deposit.return_failed' },
    ledger: deps.ledger,
    rail,
    log: deps.log,
    now: deps.now,
    newId: deps.newId,
  };
  const payments: ReturnablePayments = {
    idPattern: /^dep_[a-z0-9]{24}$/,
    companyOf: async (depositId) => (await deps.store.paymentById(depositId))?.companyId,
    // A held payment assigned later was credited by its assignment (`:assign`), not by its first posting.
    inflowKey: (p) => creditLedgerKey(p.providerTransferId, p.hint === 'true'),
    notReturnable: (status) =>
      status === 'UNASSIGNED'
        ? 'El pago no está acreditado a la billetera (UNASSIGNED); devuélvalo completo con POST /deposits/{id}/return.'
        : `Solo un pago acreditado (ASSIGNED) puede devolverse; este está en ${status}.`,
  };
  const saga = new ReturnSaga(returnDeps);
  return { saga, create: new CreateDepositReturn(returnDeps, saga, payments), list: new ListDepositReturns(deps.returns, payments) };
}

/** collect_key's returns table (migration 0010) and how its payments read for a return. */
export const COLLECT_KEY_RETURNS = {
  schema: 'collect_key',
  returns: 'payment_returns',
  history: 'payment_return_history',
  payments: {
    table: 'payments',
    id: 'deposit_id',
    scope: 'true',
    returnable: "p.status = 'ASSIGNED'",
    providerId: 'p.provider_transfer_id',
    payerName: 'p.payer_name',
    payerDocument: 'p.payer_document',
    payerBank: 'p.payer_bank',
    inflowHint: "exists (select 1 from collect_key.payment_history h where h.deposit_id = p.deposit_id and h.to_state = 'ASSIGNING')",
  },
} as const;
