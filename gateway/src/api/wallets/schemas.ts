import { ledgerV1 } from '@wallet/proto';
import { z } from 'zod';
import { instant, centsString, count, centsNumber, documentAsOneOf, MAX_TRANSFER_CENTS } from '../../http/schemas.js';
import { centsSchema, queryInt, textSchema } from '../../http/validation.js';

export const WalletSchema = z
  .object({
    rail: z.enum(['BREB', 'ACH']),
    type: z.enum(['FAST', 'ACH']).meta({ description: 'Legacy alias of `rail` (BREB → FAST).', deprecated: true }),
    availableCents: centsString(),
    pendingOutCents: centsString(),
    totalCents: centsString(),
    version: count().meta({ description: 'Increments with every movement.' }),
    maxTransferAmount: centsNumber(MAX_TRANSFER_CENTS).meta({
      description: 'Largest sendable gross amount whose amount + fee + IVA fits the available balance (capped at the rail cap; 0 under the minimum).',
    }),
  })
  .meta({ id: 'Wallet' });

export const BalanceSchema = z
  .object({
    currency: z.literal('COP'),
    wallets: z.array(WalletSchema),
    consolidated: z.object({
      availableCents: centsString(),
      pendingOutCents: centsString(),
      totalCents: centsString(),
      currency: z.literal('COP'),
    }),
  })
  .meta({ id: 'Balance' });

export const BalanceAtSchema = z
  .object({
    rail: z.enum(['BREB', 'ACH']),
    at: instant().meta({ description: 'The instant asked for, in UTC with microseconds (`2026-11-21T15:00:00.000000Z`).' }),
    currency: z.literal('COP'),
    availableCents: centsString().meta({ description: 'What the company could spend at `at`.' }),
    pendingOutCents: centsString().meta({ description: 'Held for sends still in flight at `at`.' }),
    totalCents: centsString().meta({ description: 'availableCents + pendingOutCents.' }),
    version: count().meta({ description: "The wallet's version at `at`: the postings on it up to then (0 before the first)." }),
  })
  .meta({ id: 'BalanceAt' });

/** A movement's status, and a transfer's, as the ledger declares it (ledger.proto `MovementStatus`, without its prefix). */
export const MOVEMENT_STATUSES = Object.values(ledgerV1.MovementStatus)
  .filter((s) => s !== ledgerV1.MovementStatus.UNSPECIFIED && s !== ledgerV1.MovementStatus.UNRECOGNIZED)
  .map((s) => s.slice('MOVEMENT_STATUS_'.length)) as [string, ...string[]];
export const MovementStatusSchema = z.enum(MOVEMENT_STATUSES).meta({
  id: 'MovementStatus',
  description:
    'PENDING (accepted, on its way), AWAITING_APPROVAL (multi-signature), EXECUTING, COMPLETED, FAILED, EXPIRED (no quorum in time), REVERSED (paid, then returned).',
});

const MovementTypeSchema = z.enum(['TRANSFER_OUT', 'TRANSFER_IN', 'FEE_CHARGE', 'BALANCE_ADD']);
const MovementRailSchema = z.enum(['BREB', 'ACH', 'PSE']);

/** What a statement line is (docs/statements.md); every bank format maps each one (a `Record<StatementEntry, …>` there). */
export const STATEMENT_ENTRIES = [
  'CREDIT',
  'FEE_CHARGE',
  'TRANSFER_OUT',
  'TRANSFER_OUT_RETURNED',
  'TRANSFER_IN',
  'TRANSFER_IN_REVERSED',
  'CORRECTION',
  'WALLET_MOVE_OUT',
  'WALLET_MOVE_IN',
] as const;
export type StatementEntry = (typeof STATEMENT_ENTRIES)[number];

const StatementBalanceSchema = z.object({ availableCents: centsString(), pendingOutCents: centsString() });

export const StatementLineSchema = z
  .object({
    postingId: z
      .string()
      .meta({ description: "The ledger posting of this line (unique; a movement may have two lines: a failed send's debit and its return)." }),
    postedAt: instant().meta({
      description: 'When the posting was made (UTC, microseconds, exactly as the journal keeps it): as `to` it includes this line, as `from` it excludes it.',
    }),
    postedAtBogota: z.string().meta({ description: 'The same instant in Bogotá time (`…-05:00`).', example: '2026-11-28T11:39:52.123456-05:00' }),
    entry: z
      .enum(STATEMENT_ENTRIES)
      .meta({ description: '`WALLET_MOVE_OUT` / `WALLET_MOVE_IN`: a move between your own wallets (POST /wallets/moves), out of this wallet / into it.' }),
    movementId: z.string().nullable().meta({ description: 'The movement (GET /wallets/transactions/{id}); null for a correction without one.' }),
    movementType: MovementTypeSchema.nullable(),
    movementRail: MovementRailSchema.nullable(),
    movementStatus: MovementStatusSchema.nullable().meta({ description: "The movement's status now (a send pending at `to` may have completed since)." }),
    reference: z.string().nullable(),
    counterparty: z.string().nullable().meta({ description: 'Recipient of a send or payer of an inflow.' }),
    description: z.string().nullable(),
    amountCents: centsString().meta({ description: 'Effect on the available balance: > 0 in, < 0 out (a send: amount + fee + IVA).' }),
    feeCents: centsString().meta({ description: 'Fee charged by this line (< 0: given back).' }),
    ivaCents: centsString().meta({ description: 'IVA on that fee (< 0: given back).' }),
    balanceAfterCents: centsString().meta({ description: 'Available balance after this line.' }),
  })
  .meta({ id: 'StatementLine' });

export const StatementSchema = z
  .object({
    company: z.object({ name: z.string(), nit: z.string() }),
    rail: z.enum(['BREB', 'ACH']),
    currency: z.literal('COP'),
    timezone: z.literal('America/Bogota'),
    from: instant(),
    to: instant(),
    fromBogota: z.string(),
    toBogota: z.string(),
    opening: StatementBalanceSchema.meta({ description: 'The balance at `from` (as GET /wallets/balance/history).' }),
    closing: StatementBalanceSchema.meta({ description: 'The balance at `to`; closing.availableCents = opening.availableCents + Σ lines.amountCents.' }),
    totals: z.object({
      inCents: centsString(),
      outCents: centsString().meta({ description: 'Positive: the sum of the outgoing lines, unsigned.' }),
      feesCents: centsString(),
      ivaCents: centsString(),
      lineCount: count(),
    }),
    lines: z.array(StatementLineSchema),
    journalHeads: z
      .array(
        z.object({
          day: z.iso.date().meta({ description: 'The Bogotá day it closed.' }),
          seq: z
            .string()
            .regex(/^\d{1,18}$/)
            .meta({ description: 'Postings sealed into the journal up to this head (decimal string).' }),
          hash: z
            .string()
            .regex(/^[0-9a-f]{64}$/)
            .meta({ description: "The journal chain's SHA-256 there (64 lowercase hex digits)." }),
        }),
      )
      .meta({
        description:
          "The tamper-evident journal's heads recorded for the Bogotá days of the period (docs/journal.md), one per day, recorded just after the day closes (a statement of today has none yet). Keep them: the ledger's journal verifies against them (GET /admin/ledger/verification, npm run ledger:verify) and no later edit of the books can pass through them.",
      }),
  })
  .meta({ id: 'Statement' });

export const MovementSchema = z
  .object({
    id: z.string(),
    type: MovementTypeSchema,
    rail: MovementRailSchema,
    status: MovementStatusSchema,
    amount: centsString(),
    totalFee: centsString(),
    ivaAmount: centsString(),
    netAmount: centsString(),
    targetName: z.string().nullable(),
    targetDocument: z.string().nullable(),
    reference: z.string().nullable(),
    createdAt: instant(),
    completedAt: instant().nullable(),
    walletMoveId: z.string().nullable().meta({
      format: 'uuid',
      description: 'A leg of a move between your own wallets (GET /wallets/moves/{id}; its other leg is on your other wallet); null otherwise.',
    }),
  })
  .meta({ id: 'Movement' });

export const MovementDetailSchema = MovementSchema.extend({
  bankName: z.string().nullable(),
  bankAccountType: z.string().nullable(),
  bankAccountNumber: z.string().nullable().meta({ description: 'Masked to its last 4 digits.' }),
  description: z.string().nullable(),
  errorMessage: z.string().nullable(),
  batchId: z.string().nullable().meta({ description: 'The bulk payout (POST /transfers/batches) this send is an item of; null otherwise.' }),
}).meta({ id: 'MovementDetail' });

export const MovementPageSchema = z
  .object({
    items: z.array(MovementSchema),
    nextCursor: z.string().nullable(),
    hasMore: z.boolean(),
  })
  .meta({ id: 'MovementPage' });

// ---- Moves between the company's own wallets (docs/wallet-moves.md) ----

const WALLETS = ['BREB', 'ACH'] as const;
/** At most what one send can carry (the ACH cap), as every amountCents of a request. */
const moveAmount = () =>
  centsSchema(1, MAX_TRANSFER_CENTS).meta({
    description: 'Centavos to move (JSON integer), 1 to 200,000,000,000 (2,000 million COP). No fee.',
    example: 150_000,
  });
const moveTexts = {
  reference: textSchema(1, 64)
    .optional()
    .meta({ description: 'Your reference, on both legs (`reference` of each movement); not a uniqueness key: use `Idempotency-Key` for that.' }),
  description: textSchema(1, 140).optional().meta({ description: "Your note, on both legs (the movements' `description`)." }),
};

/** The two moves there are, as the document shows them (the server checks CreateWalletMoveBody, the same rules). */
const MOVE_VARIANTS = [
  z
    .strictObject({ from: z.literal('BREB'), to: z.literal('ACH'), amountCents: moveAmount(), ...moveTexts })
    .meta({ id: 'MoveBrebToAchRequest', description: 'From the BREB wallet to the ACH wallet.' }),
  z
    .strictObject({ from: z.literal('ACH'), to: z.literal('BREB'), amountCents: moveAmount(), ...moveTexts })
    .meta({ id: 'MoveAchToBrebRequest', description: 'From the ACH wallet to the BREB wallet.' }),
] as const;

export const CreateWalletMoveBody = documentAsOneOf(
  z
    .strictObject({
      from: z.enum(WALLETS).meta({ description: 'The wallet the money leaves.' }),
      to: z.enum(WALLETS).meta({ description: "The wallet it reaches: the company's other one." }),
      amountCents: moveAmount(),
      ...moveTexts,
    })
    .superRefine((b, ctx) => {
      if (b.from === b.to) ctx.addIssue({ code: 'custom', path: ['to'], message: 'Debe ser la otra billetera de la empresa (distinta de from).' });
    })
    .meta({ id: 'CreateWalletMoveRequest', description: 'From one of your wallets to the other: `from` BREB and `to` ACH, or the reverse.' }),
  MOVE_VARIANTS,
);

export const WalletMoveSchema = z
  .object({
    id: z.string().meta({ format: 'uuid', description: 'The move (GET /wallets/moves/{id}); also `walletMoveId` of its two movements.' }),
    from: z.enum(WALLETS),
    to: z.enum(WALLETS),
    amountCents: centsNumber(MAX_TRANSFER_CENTS).min(1).meta({ description: 'Centavos moved (JSON integer); no fee.' }),
    status: z.literal('COMPLETED').meta({ description: 'A move is instant: both legs are posted together, or nothing is.' }),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    debitTransactionId: z.string().meta({ format: 'uuid', description: 'The `TRANSFER_OUT` movement on the `from` wallet (GET /wallets/transactions/{id}).' }),
    creditTransactionId: z.string().meta({ format: 'uuid', description: 'The `TRANSFER_IN` movement on the `to` wallet.' }),
    createdAt: instant().meta({ description: 'When both legs were posted (UTC, microseconds, as the movements show it).' }),
  })
  .meta({ id: 'WalletMove' });

// ---- Balance alerts (docs/balance-alerts.md) ----

/** The largest threshold or hysteresis: what a JSON number holds exactly (2^53 − 1 centavos). */
const MAX_ALERT_CENTS = Number.MAX_SAFE_INTEGER;
const BalanceAlertStateSchema = z.enum(['NORMAL', 'LOW', 'HIGH']).meta({
  id: 'BalanceAlertState',
  description:
    'NORMAL, LOW (available fell below the low threshold, not yet back at low + hysteresis), HIGH (above the high threshold, not yet back at high − hysteresis).',
});

export const PutBalanceAlertBody = z
  .strictObject({
    lowThresholdCents: centsSchema(0, MAX_ALERT_CENTS).nullable().meta({
      description: 'Alert when the available balance falls below this (centavos, JSON integer). `0` or `null`: no low threshold.',
      example: 500_000_000,
    }),
    highThresholdCents: centsSchema(1, MAX_ALERT_CENTS).nullable().optional().meta({
      description: 'Alert when the available balance rises above this. Absent or `null`: none. Must be greater than lowThresholdCents + hysteresisCents.',
      example: 5_000_000_000,
    }),
    hysteresisCents: centsSchema(0, MAX_ALERT_CENTS).optional().meta({
      description:
        'Default 0. A LOW wallet recovers only once available ≥ low + hysteresis; a HIGH one goes back to normal only once available ≤ high − hysteresis: a balance hovering around a threshold alerts once.',
      example: 50_000_000,
    }),
  })
  .superRefine((b, ctx) => {
    const low = b.lowThresholdCents ?? 0;
    const h = b.hysteresisCents ?? 0;
    if (b.highThresholdCents != null && b.highThresholdCents <= low + h)
      ctx.addIssue({ code: 'custom', path: ['highThresholdCents'], message: 'Debe ser mayor que lowThresholdCents + hysteresisCents.' });
  })
  .meta({
    id: 'PutBalanceAlertRequest',
    description: 'The alert of one wallet. `lowThresholdCents` 0 or null with no `highThresholdCents` removes it (its history stays).',
  });

export const BalanceAlertSettingsSchema = z
  .object({
    rail: z.enum(WALLETS),
    enabled: z.boolean().meta({ description: 'false: no alert on this wallet (the thresholds are null).' }),
    lowThresholdCents: centsNumber(MAX_ALERT_CENTS).min(1).nullable(),
    highThresholdCents: centsNumber(MAX_ALERT_CENTS).min(1).nullable(),
    hysteresisCents: centsNumber(MAX_ALERT_CENTS),
    state: BalanceAlertStateSchema,
    availableCents: centsString().meta({ description: 'The wallet\'s available balance now ("0" when the wallet is not provisioned).' }),
    updatedAt: instant().nullable().meta({ description: 'When the settings were last set; null when not enabled.' }),
  })
  .meta({ id: 'BalanceAlertSettings' });

export const BalanceAlertsSchema = z
  .object({ items: z.array(BalanceAlertSettingsSchema).meta({ description: 'Both wallets, BREB then ACH, set or not.' }) })
  .meta({ id: 'BalanceAlerts' });

export const BalanceAlertEventSchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    type: z
      .enum(['wallet.balance_low', 'wallet.balance_recovered', 'wallet.balance_high', 'wallet.balance_normal'])
      .meta({ description: 'The webhook this crossing was delivered as.' }),
    rail: z.enum(WALLETS),
    kind: z.enum(['LOW', 'RECOVERED', 'HIGH', 'NORMAL']),
    state: BalanceAlertStateSchema.meta({ description: 'The state the wallet entered.' }),
    availableCents: centsString().meta({ description: 'The available balance that crossed (may be negative after a reversal).' }),
    thresholdCents: centsNumber(MAX_ALERT_CENTS).meta({ description: 'The threshold crossed: the low one for LOW/RECOVERED, the high one for HIGH/NORMAL.' }),
    lowThresholdCents: centsNumber(MAX_ALERT_CENTS).min(1).nullable(),
    highThresholdCents: centsNumber(MAX_ALERT_CENTS).min(1).nullable(),
    hysteresisCents: centsNumber(MAX_ALERT_CENTS),
    occurredAt: instant(),
  })
  .meta({ id: 'BalanceAlertEvent' });

export const BalanceAlertEventPageSchema = z
  .object({ items: z.array(BalanceAlertEventSchema), nextCursor: z.string().nullable(), hasMore: z.boolean() })
  .meta({ id: 'BalanceAlertEventPage' });

export const ALERTS_DOC =
  'Per wallet, a low threshold and optionally a high one, with hysteresis (docs/balance-alerts.md). The ledger checks each wallet that moved within ' +
  'about a second: when the available balance falls below the low threshold the wallet enters `LOW` (webhook `wallet.balance_low`, an e-mail to ' +
  "the company's dashboard ADMINs) and leaves it only once it is back at low + hysteresis (`wallet.balance_recovered`); above the high threshold " +
  'it enters `HIGH` (`wallet.balance_high`) until it is back at high − hysteresis (`wallet.balance_normal`). Each crossing alerts once.';

export const AlertRailParam = z.enum(['BREB', 'ACH']).meta({ description: 'The wallet: BREB or ACH.' });

/** GET /wallets/alerts/history and GET /dashboard/wallets/alerts/history. */
export const AlertHistoryQuery = z.strictObject({
  rail: AlertRailParam.optional(),
  limit: queryInt(1, 100, 20),
  cursor: z.string().min(1).max(512).optional().meta({ description: 'The `nextCursor` of the previous page.' }),
});

/** The ledger's ListBalanceAlertEvents request for AlertHistoryQuery. */
export function alertHistoryRequest(query: z.infer<typeof AlertHistoryQuery>): ledgerV1.ListBalanceAlertEventsRequest {
  const rail = query.rail === 'BREB' ? ledgerV1.Rail.BREB : query.rail === 'ACH' ? ledgerV1.Rail.ACH : undefined;
  return { ...(rail !== undefined ? { rail } : {}), limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}) };
}
