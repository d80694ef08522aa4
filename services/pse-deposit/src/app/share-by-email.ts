import { AppError } from '@wallet/platform';
import { isDepositId, publicStatus } from '../domain/deposit.js';
import { paymentRequestMail } from '../domain/email-template.js';
import { validateShare, type ShareInput } from '../domain/validation.js';
import type { DepositDeps } from './deps.js';

export interface ShareCommand extends ShareInput {
  company: { name: string };
}

/**
 * POST /deposits/{id}/share-email (§4.7): the standard Spanish template with the pay link, sent with
 * nodemailer. Unknown or another company's id → DEPOSIT_NOT_FOUND (same answer); no longer
 * PENDING_CONFIRM (a Bre-B deposit never is) → DEPOSIT_NOT_PENDING; SMTP failure → SERVICE_UNAVAILABLE.
 */
export class ShareByEmail {
  constructor(private readonly deps: DepositDeps) {}

  async execute(companyId: string | undefined, cmd: ShareCommand): Promise<{ success: boolean; messageId: string }> {
    if (!companyId) throw new AppError('AUTH_REQUIRED');
    const input = validateShare(cmd);
    const d = isDepositId(input.depositId) ? await this.deps.store.get(companyId, input.depositId) : undefined;
    if (!d) throw new AppError('DEPOSIT_NOT_FOUND');
    // Pending as clients see it: not yet paid, and its link not past expiresAt.
    if (
      d.source !== 'PSE' ||
      d.status !== 'PENDING_CONFIRM' ||
      publicStatus(d.status, d.expiresAt, this.deps.now()) !== 'PENDING_CONFIRM' ||
      !d.paygatewayUrl
    ) {
      throw new AppError('DEPOSIT_NOT_PENDING');
    }
    const mail = paymentRequestMail({
      companyName: cmd.company.name,
      recipientName: input.recipientName,
      amountCents: d.amount,
      payUrl: d.paygatewayUrl,
      expiresAt: d.expiresAt,
      customMessage: input.customMessage,
      internalRef: d.internalRef,
    });
    const sent = await this.deps.mailer.send({
      to: { address: input.recipientEmail, ...(input.recipientName ? { name: input.recipientName } : {}) },
      ...mail,
    });
    this.deps.log.info({ depositId: d.id, messageId: sent.messageId }, 'payment request e-mailed');
    return { success: true, messageId: sent.messageId };
  }
}
