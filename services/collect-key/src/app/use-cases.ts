import type { CollectKeyDeps } from './deps.js';
import { AssignPayment } from './assign-payment.js';
import { CloseCobroKey, IssueCobroKey } from './cobro-key.js';
import { ReturnPayment } from './return-payment.js';
import { collectKeyReturns } from './returns.js';
import { ListPaymentExceptions, ResolvePaymentException } from './exceptions.js';
import { HandleIncomingPayment } from './incoming-payment.js';
import { PaymentSaga } from './payment-saga.js';
import { CreateKey, DeleteKey, GetKey, ListKeys, SetKeyState } from './keys.js';
import { GetQrPng, IssueQr } from './qr.js';
import { SettleRegistration } from './settle-registration.js';

/** Every use case of the service, built once from the same ports. */
export function collectKeyUseCases(deps: CollectKeyDeps) {
  const saga = new PaymentSaga(deps);
  const returnPayment = new ReturnPayment(deps, saga);
  const returns = collectKeyReturns(deps);
  return {
    saga,
    returnSaga: returns.saga,
    createDepositReturn: returns.create,
    listDepositReturns: returns.list,
    settleRegistration: new SettleRegistration(deps),
    createKey: new CreateKey(deps),
    listKeys: new ListKeys(deps),
    getKey: new GetKey(deps),
    deleteKey: new DeleteKey(deps),
    setKeyState: new SetKeyState(deps),
    issueQr: new IssueQr(deps),
    getQrPng: new GetQrPng(deps),
    handleIncomingPayment: new HandleIncomingPayment(deps, saga),
    listExceptions: new ListPaymentExceptions(deps),
    resolveException: new ResolvePaymentException(deps, saga, returnPayment, returns.saga),
    assignPayment: new AssignPayment(deps, saga),
    returnPayment,
    issueCobroKey: new IssueCobroKey(deps),
    closeCobroKey: new CloseCobroKey(deps),
  };
}
export type CollectKeyUseCases = ReturnType<typeof collectKeyUseCases>;
