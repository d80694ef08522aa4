import { AppError, centsToNumber, isUniqueViolation } from '@wallet/platform';
import { feeExceedsAmount, netOf, newDepositId, payerFullName, type DepositRecord } from '../domain/deposit.js';
import { validateCreatePse, type CreatePseInput } from '../domain/validation.js';
import type { DepositDeps } from './deps.js';
import { depositEvent } from './events.js';

export interface CreatePseCommand extends CreatePseInput {
  company: { name: string; ivaApplicable: boolean };
  /** A cobro's link (docs/cobros.md): valid until the cobro expires, one per cobro (a repeat answers the same deposit). */
  cobro?: { id: string; expiresAt: Date };
}

/**
 * POST /deposits/pse (§4.6): field rules → the kill switch → fee (PSE_INFLOW, IVA by the tax regime)
 * → FEE_EXCEEDS_AMOUNT → the link at the provider (valid PSE_LINK_TTL_SECONDS) → the deposit
 * PENDING_CONFIRM + `deposit.created` in one transaction. Nothing is stored when the provider fails.
 */
export class CreatePseDeposit {
  constructor(private readonly deps: DepositDeps) {}

  async execute(companyId: string | undefined, apiKeyId: string | undefined, cmd: CreatePseCommand): Promise<DepositRecord> {
    if (!companyId) throw new AppError('AUTH_REQUIRED');
    const input = validateCreatePse(cmd);
    const deps = this.deps;
    if (!deps.settings.inflowEnabled) throw new AppError('PSE_INFLOW_DISABLED');
    const fee = await deps.ledger.computeFees(companyId, input.amountCents, cmd.company.ivaApplicable);
    if (feeExceedsAmount(input.amountCents, fee)) {
      throw new AppError('FEE_EXCEEDS_AMOUNT', undefined, {
        grossCents: centsToNumber(input.amountCents),
        totalFee: centsToNumber(fee.subtotalFee),
        ivaAmount: centsToNumber(fee.ivaAmount),
        totalCharged: centsToNumber(fee.subtotalFee + fee.ivaAmount),
      });
    }
    if (cmd.cobro) {
      const existing = await deps.store.byCobro(companyId, cmd.cobro.id);
      if (existing) return existing;
    }
    const id = newDepositId();
    const expiresAt = cmd.cobro?.expiresAt ?? new Date(deps.now().getTime() + deps.settings.linkTtlSeconds * 1000);
    const payerName = payerFullName(input.payerFirstName, input.payerLastName) ?? '';
    const link = await deps.pse.createLink({
      depositId: id,
      amountCents: input.amountCents,
      companyName: cmd.company.name || 'Empresa',
      payerName,
      payerEmail: input.payerEmail,
      ...(input.internalRef ? { description: input.internalRef } : {}),
      expiresAt,
      callbackUrl: deps.settings.callbackUrl,
    });
    const record: DepositRecord = {
      id,
      companyId,
      source: 'PSE',
      status: 'PENDING_CONFIRM',
      amount: input.amountCents,
      fee,
      netAmount: netOf(input.amountCents, fee),
      currency: 'COP',
      payerDocumentType: input.payerDocumentTypeId,
      payerDocumentNumber: input.payerDocumentNumber,
      payerFirstName: input.payerFirstName,
      payerLastName: input.payerLastName,
      payerName,
      payerEmail: input.payerEmail,
      payerPhone: input.payerPhone ?? null,
      payerBank: null,
      internalRef: input.internalRef ?? null,
      paygatewayUrl: link.paygatewayUrl,
      providerLinkId: link.linkId,
      expiresAt,
      providerTransferId: null,
      providerConfirmedAt: null,
      movementId: deps.newId(),
      pendingStep: null,
      errorMessage: null,
      brebKey: null,
      createdAt: deps.now(),
      cobroId: cmd.cobro?.id ?? null,
    };
    try {
      return await deps.store.insert({ ...record, apiKeyId: apiKeyId ?? null }, depositEvent(deps, 'created', record));
    } catch (err) {
      // Two creations of one cobro's link raced: the other's deposit is the link (this provider link is never shown nor paid).
      if (cmd.cobro && isUniqueViolation(err, 'deposits_cobro_link_uq')) {
        const winner = await deps.store.byCobro(companyId, cmd.cobro.id);
        if (winner) return winner;
      }
      throw err;
    }
  }
}
