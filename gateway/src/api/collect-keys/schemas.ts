import { z } from 'zod';
import { isoDate } from '../../http/schemas.js';

export const CollectKeySchema = z
  .object({
    id: z.string().meta({ description: '`bkey_…`' }),
    externalId: z.string(),
    name: z.string(),
    key: z.object({ type: z.string(), value: z.string() }),
    state: z.enum(['ACTIVE', 'SUSPENDED', 'DELETED']),
    createdAt: isoDate(),
    deletedAt: isoDate().nullable(),
  })
  .meta({ id: 'CollectKey' });

export const CollectKeyPageSchema = z
  .object({
    items: z.array(CollectKeySchema),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'CollectKeyPage' });

export const CollectKeyQrSchema = z
  .object({
    qr: z.object({ id: z.string(), type: z.literal('STATIC'), reference: z.string(), isPaid: z.boolean(), createdAt: isoDate() }),
    reused: z.boolean(),
  })
  .meta({ id: 'CollectKeyQr' });

export const DEPOSIT_ID = z.string().regex(/^dep_[a-z0-9]{24}$/);

export const AssignBody = z.strictObject({
  keyId: z
    .string()
    .regex(/^bkey_[a-z0-9]{24}$/)
    .optional()
    .meta({
      description: 'A live (ACTIVE) key of the same company to assign the payment through (its `brebKey` becomes that key). Omitted: the key it was paid to.',
    }),
});

export const ASSIGN_DESCRIPTION =
  "A Bre-B payment held UNASSIGNED (it was paid to a suspended or deleted key) is credited to the company's BREB wallet as a payment to a live key would have been (the BREB_INFLOW fee and IVA apply): `unassigned_funds(BREB)` −gross, the wallet +net, `deposit.paid`. Idempotent on the deposit: a repeat, or a concurrent request, answers the ASSIGNED deposit and posts nothing more. 409 `INVALID_STATE_TRANSITION` when the deposit is not an UNASSIGNED Bre-B payment; 404 `FAST_WALLET_MISSING` when the company has no BREB wallet (the payment stays UNASSIGNED).";

export const RETURN_DESCRIPTION =
  "A Bre-B payment held UNASSIGNED (it was paid to a suspended or deleted key) is returned to the payer through the Bre-B network (the whole amount): the network's return, then `unassigned_funds(BREB)` −gross against the Bre-B settlement account, and `deposit.reversed`; the deposit then shows REVERSED. Idempotent on the deposit: a repeat answers the REVERSED deposit. An assignment and a return exclude each other: 409 `INVALID_STATE_TRANSITION` for the one that finds the deposit no longer UNASSIGNED. 503 when the network does not answer: the return is finished on its own.";
