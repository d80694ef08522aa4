import { createHash, randomUUID } from 'node:crypto';
import { AppError } from '@wallet/platform';
import type { ledgerV1 } from '@wallet/proto';
import type { z } from 'zod';
import { railToProto } from './presenters.js';
import type { CreateWalletMoveBody } from './schemas.js';

/** The ledger caps idempotency keys at 200 characters (services/ledger validation MAX_IDEMPOTENCY_KEY). */
const MAX_LEDGER_KEY = 200;

/**
 * The ledger's idempotency key of a move: the client's `Idempotency-Key` (the ledger keeps it per
 * company and per kind, `move:<company>:<key>`), hashed when longer than the ledger takes (the header
 * allows 255). Without a key, a fresh one: each request is a new move.
 */
export function moveLedgerKey(idempotencyKey: string | undefined): string {
  if (idempotencyKey === undefined) return `auto:${randomUUID()}`;
  if (idempotencyKey.length <= MAX_LEDGER_KEY) return idempotencyKey;
  return `sha256:${createHash('sha256').update(idempotencyKey, 'utf8').digest('hex')}`;
}

/** POST /wallets/moves → the ledger's MoveRequest. */
export function moveRequestOf(body: z.output<typeof CreateWalletMoveBody>, idempotencyKey: string | undefined): ledgerV1.MoveRequest {
  return {
    idempotencyKey: moveLedgerKey(idempotencyKey),
    fromRail: railToProto(body.from),
    toRail: railToProto(body.to),
    amountCents: BigInt(body.amountCents),
    ...(body.reference !== undefined ? { reference: body.reference } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
  };
}

/**
 * The ledger binds the key to the move's input and answers another input REFERENCE_CONFLICT; here the
 * key is the client's Idempotency-Key, so the client hears what every other idempotent POST says.
 */
export function inMoveTerms(err: unknown): unknown {
  if (err instanceof AppError && err.code === 'REFERENCE_CONFLICT') return new AppError('IDEMPOTENCY_KEY_REUSED');
  return err;
}
