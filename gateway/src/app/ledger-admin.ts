import { createHash } from 'node:crypto';
import { AppError, type CallContext } from '@wallet/platform';
import type { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../clients/ledger-client.js';
import { feeOperationToProto, railToProto, type ApiFeeOperation, type ApiRail } from '../api/wallets/presenters.js';
import type { CompanyAdmin } from './company-admin.js';
import { actingOn } from '../clients/acting-on.js';

/** Operator money operations, forwarded to the ledger with an idempotency key derived here. */
export class LedgerAdmin {
  constructor(
    private readonly ledger: LedgerClient,
    private readonly companies: CompanyAdmin,
  ) {}

  /**
   * Credits a wallet (BALANCE_ADD). Idempotent on the operator's reference: the ledger key is
   * `admin-credit:<companyId>:<reference>`, so a retry returns the first movement and the same
   * reference with a different amount or rail is REFERENCE_CONFLICT.
   */
  async credit(companyId: string, rail: ApiRail, amountCents: number, reference: string, call: CallContext): Promise<ledgerV1.Movement> {
    await this.companies.assertExists(companyId);
    const res = await this.ledger.credit(
      {
        idempotencyKey: adminCreditKey(companyId, reference),
        rail: railToProto(rail),
        amountCents: BigInt(amountCents),
        reference,
      },
      actingOn(call, companyId),
    );
    if (!res.movement) throw new AppError('INTERNAL_ERROR');
    return res.movement;
  }

  /**
   * Verifies the tamper-evident journal (docs/journal.md) from genesis or a trusted head. A long
   * call: the ledger reads every sealed posting after `from`.
   */
  verifyJournal(from: { seq: string; hash: string } | null, call: CallContext): Promise<ledgerV1.VerifyJournalResponse> {
    return this.ledger.verifyJournal(from ? { fromSeq: BigInt(from.seq), fromHash: from.hash } : {}, call, { deadlineMs: JOURNAL_VERIFY_DEADLINE_MS });
  }

  async setFee(
    operation: ApiFeeOperation,
    fixedFeeCents: number,
    variableBps: number,
    companyId: string | undefined,
    call: CallContext,
  ): Promise<ledgerV1.FeeConfig> {
    if (companyId !== undefined) await this.companies.assertExists(companyId);
    return this.ledger.setFeeConfig(
      {
        operation: feeOperationToProto(operation),
        ...(companyId !== undefined ? { companyId } : {}),
        fixedFeeCents: BigInt(fixedFeeCents),
        variableBps,
      },
      call,
    );
  }
}

/** Under the HTTP server's own time limit (30 s): a verification longer than this is the CLI's (docs/journal.md). */
const JOURNAL_VERIFY_DEADLINE_MS = 25_000;

/** The ledger caps idempotency keys at 200 characters; a reference that would not fit is hashed (deterministically). */
const MAX_KEY = 200;

export function adminCreditKey(companyId: string, reference: string): string {
  const literal = `admin-credit:${companyId}:${reference}`;
  if (literal.length <= MAX_KEY) return literal;
  return `admin-credit-h:${companyId}:${createHash('sha256').update(reference, 'utf8').digest('hex')}`;
}
