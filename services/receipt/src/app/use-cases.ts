import type { ReceiptDeps } from './deps.js';
import { GetDepositReceipt } from './get-deposit-receipt.js';
import { GetTransactionReceipt } from './get-transaction-receipt.js';
import { VerifyReceipt } from './verify-receipt.js';

/** The receipt use cases, built once from the same ports. */
export function receiptUseCases(deps: ReceiptDeps) {
  return {
    transactionReceipt: new GetTransactionReceipt(deps),
    depositReceipt: new GetDepositReceipt(deps),
    verify: new VerifyReceipt(deps),
  };
}
export type ReceiptUseCases = ReturnType<typeof receiptUseCases>;
