import type { ParameterizedContext } from 'koa';
import { transferView, type TransferSubmission } from '../../app/rail-transfers.js';
import type { Rail } from '../../domain/rails.js';
import type { SandboxHttpDeps } from '../context.js';

/** Shared by both rails: 202 with the original answer (a repeat is marked `Idempotent-Replayed`), and GET status. */
export async function submitTransfer(ctx: ParameterizedContext, d: SandboxHttpDeps, rail: Rail, s: TransferSubmission): Promise<void> {
  const { transfer, created } = await d.rails.submit(rail, s);
  if (!created) ctx.set('Idempotent-Replayed', 'true');
  ctx.status = 202;
  ctx.body = { providerTransferId: transfer.providerTransferId, status: 'PENDING' };
}

export async function transferStatus(ctx: ParameterizedContext, d: SandboxHttpDeps, rail: Rail): Promise<void> {
  ctx.body = transferView(await d.rails.get(rail, String(ctx.params.transactionId ?? '')));
}
