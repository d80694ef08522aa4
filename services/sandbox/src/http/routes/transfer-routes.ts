import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { ProviderError } from '../../app/errors.js';
import { transferView, type TransferSubmission } from '../../app/rail-transfers.js';
import type { Rail } from '../../domain/rails.js';
import type { SandboxHttpDeps } from '../context.js';
import { invalidRequest, parse, readJson } from '../http-input.js';

/** The most transfers one bulk submission takes (docs/sandbox.md "Bulk submission"). */
export const MAX_BULK_TRANSFERS = 200;

const bulkBody = z.object({ transfers: z.array(z.unknown()).min(1).max(MAX_BULK_TRANSFERS) }).strict();

/**
 * POST …/transfers/bulk: `{ transfers: [ <the single submission's body>, … ] }` (1 to 200, no
 * transactionId twice) → 200 `{ results: [ … ] }`, one per transfer in the given order: `{ transactionId,
 * status: 202, providerTransferId, replayed }` when taken (now or before), else `{ transactionId, status,
 * error, message, details? }` with the status and body the single submission would have answered. A
 * body that is not such a list answers 400 as a whole; a rail that is down, 503 (nothing taken).
 */
export async function submitBulk(
  ctx: ParameterizedContext,
  d: SandboxHttpDeps,
  rail: Rail,
  item: (body: unknown, path: string) => TransferSubmission,
): Promise<void> {
  const { transfers } = parse(bulkBody, await readJson(ctx.req));
  const parsed = transfers.map((t, i) => {
    try {
      return item(t, `transfers.${i}`);
    } catch (err) {
      if (err instanceof ProviderError) return err;
      throw err;
    }
  });
  const ids = transfers.map((t, i) => {
    const p = parsed[i];
    return p instanceof ProviderError ? (t as { transactionId?: unknown } | null)?.transactionId : p!.transactionId;
  });
  const seen = new Set<unknown>();
  const twice = ids.findIndex((id) => typeof id === 'string' && (seen.has(id) || !seen.add(id)));
  if (twice >= 0) throw invalidRequest([{ path: `transfers.${twice}.transactionId`, message: 'Ya está en otra transferencia de este lote.' }]);
  const valid = parsed.filter((p): p is TransferSubmission => !(p instanceof ProviderError));
  const answers = await d.rails.submitMany(rail, valid);
  let k = 0;
  ctx.status = 200;
  ctx.body = {
    results: parsed.map((p, i) => {
      const a = p instanceof ProviderError ? p : answers[k++]!;
      const transactionId = typeof ids[i] === 'string' ? ids[i] : null;
      if (a instanceof ProviderError) {
        return { transactionId, status: a.status, error: a.code, message: a.message, ...(a.details !== undefined ? { details: a.details } : {}) };
      }
      return { transactionId, status: 202, providerTransferId: a.transfer.providerTransferId, replayed: !a.created };
    }),
  };
}

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
