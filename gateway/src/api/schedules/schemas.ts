import { BUSINESS_DAY_RULES, MAX_SCHEDULE_RUNS, WEEKDAYS } from '@wallet/platform';
import { z } from 'zod';
import { centsNumber, centsString, count, documentAsOneOf, instant, MAX_TRANSFER_CENTS } from '../../http/schemas.js';
import { centsSchema, INSTANT_PARAM_PATTERN, queryInt, textSchema } from '../../http/validation.js';
import { ScheduledBatchItemBody, ScheduledSendBody } from '../transfers/schemas.js';
import { BATCH_MODES, BatchStatusSchema } from '../transfers/batches/schemas.js';
import { MAX_BATCH_ITEMS } from '../transfers/batches/batch-items.js';
import { MovementStatusSchema } from '../wallets/schemas.js';

const WALLETS = ['BREB', 'ACH'] as const;
const TIME = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'Debe ser HH:MM (00:00 a 23:59), hora de Bogotá.' })
  .meta({ description: 'HH:MM, Bogotá (UTC−05:00 all year).', example: '08:00' });
const requestInstant = () =>
  z
    .string()
    .regex(new RegExp(INSTANT_PARAM_PATTERN), { message: 'Debe ser un instante RFC 3339 con zona (2026-12-15T08:00:00-05:00).' })
    .refine((v) => !Number.isNaN(Date.parse(v)), { message: 'Debe ser un instante válido.' })
    .meta({ format: 'date-time', example: '2026-12-15T08:00:00-05:00' });

export const RecurrenceSchema = z
  .discriminatedUnion('kind', [
    z
      .strictObject({ kind: z.literal('ONCE'), executeAt: requestInstant().meta({ description: 'The one run: a future instant.' }) })
      .meta({ id: 'RecurrenceOnce' }),
    z
      .strictObject({
        kind: z.literal('MONTHLY'),
        dayOfMonth: z.int().min(1).max(31).meta({ description: 'Day of the month; a month without it runs on its last day.', example: 15 }),
        time: TIME,
      })
      .meta({ id: 'RecurrenceMonthly' }),
    z
      .strictObject({ kind: z.literal('LAST_BUSINESS_DAY'), time: TIME })
      .meta({ id: 'RecurrenceLastBusinessDay', description: "The month's last business day." }),
    z.strictObject({ kind: z.literal('WEEKLY'), dayOfWeek: z.enum(WEEKDAYS), time: TIME }).meta({ id: 'RecurrenceWeekly' }),
    z
      .strictObject({
        kind: z.literal('CRON'),
        expression: z
          .string()
          .min(9)
          .max(100)
          .meta({ description: 'Five fields (minute hour day-of-month month day-of-week), Bogotá time.', example: '0 8 * * 1-5' }),
      })
      .meta({ id: 'RecurrenceCron' }),
  ])
  .meta({ id: 'Recurrence', description: 'When the runs are (docs/schedules.md), in Bogotá time.' });

const moveWallets = {
  from: z.enum(WALLETS).meta({ description: 'The wallet the money leaves.' }),
  to: z.enum(WALLETS).meta({ description: "The company's other wallet." }),
};
const actionDescription = textSchema(1, 140).optional().meta({ description: "A note on each run's move (the movements' `description`)." });

const SEND_ACTION = z.strictObject({ kind: z.literal('SEND'), send: ScheduledSendBody }).meta({
  id: 'ScheduleSendAction',
  description: 'Each run is an ordinary send (POST /transfers/send), decided by the approval policy in force at the run; its funds are reserved at the run.',
});
const BATCH_ACTION = z
  .strictObject({
    kind: z.literal('BATCH'),
    batch: z.strictObject({
      description: textSchema(0, 255).optional(),
      mode: z.enum(BATCH_MODES).default('all').meta({ description: '`all` (default): an invalid item rejects the run; `valid_only`: the valid items run.' }),
      items: z
        .array(ScheduledBatchItemBody)
        .min(1)
        .max(MAX_BATCH_ITEMS)
        .meta({ description: `1..${MAX_BATCH_ITEMS} payouts, each checked at the run as a bulk payout's item.` }),
    }),
  })
  .meta({
    id: 'ScheduleBatchAction',
    description:
      'Each run is an ordinary bulk payout (POST /transfers/batches, then its execution): decided by the approval policy in force at the run; all its funds reserved at once at the run, or none (the run fails and the batch is cancelled).',
  });
const MOVE_ACTION = z
  .strictObject({
    kind: z.literal('MOVE'),
    ...moveWallets,
    amountCents: centsSchema(1, MAX_TRANSFER_CENTS).meta({ description: 'Centavos each run moves (JSON integer).', example: 5_000_000_00 }),
    description: actionDescription,
  })
  .meta({ id: 'ScheduleMoveAction', description: 'Each run moves a fixed amount between your wallets (POST /wallets/moves).' });
const TOP_UP_ACTION = z
  .strictObject({
    kind: z.literal('TOP_UP'),
    ...moveWallets,
    targetBalanceCents: centsSchema(1, MAX_TRANSFER_CENTS).meta({
      description: 'The balance `to` should hold after each run: the run moves what it lacks from `from` (nothing when it holds as much).',
      example: 50_000_000_00,
    }),
    description: actionDescription,
  })
  .meta({ id: 'ScheduleTopUpAction', description: 'Each run tops `to` up to a balance from `from` (the amount is computed at the run).' });

function checkWallets(a: { kind: string; from?: string; to?: string }, ctx: z.RefinementCtx): void {
  if ((a.kind === 'MOVE' || a.kind === 'TOP_UP') && a.from === a.to)
    ctx.addIssue({ code: 'custom', path: ['to'], message: 'Debe ser la otra billetera de la empresa (distinta de from).' });
}

/** Moves and top-ups as the document shows them: one variant per direction (`to` is always the other wallet). */
const directed = (a: typeof MOVE_ACTION | typeof TOP_UP_ACTION, kind: string) =>
  (['BREB', 'ACH'] as const).map((from) => {
    const to = from === 'BREB' ? 'ACH' : 'BREB';
    return a.extend({ from: z.literal(from), to: z.literal(to) }).meta({
      id: `Schedule${kind}${from === 'BREB' ? 'BrebToAch' : 'AchToBreb'}Action`,
      description: `${a.meta()?.description ?? ''} From ${from} to ${to}.`,
    });
  });

export const ScheduleActionSchema = documentAsOneOf(
  z.discriminatedUnion('kind', [SEND_ACTION, BATCH_ACTION, MOVE_ACTION, TOP_UP_ACTION]).superRefine(checkWallets).meta({ id: 'ScheduleAction' }),
  [SEND_ACTION, BATCH_ACTION, ...directed(MOVE_ACTION, 'Move'), ...directed(TOP_UP_ACTION, 'TopUp')],
);

const ruleFields = {
  businessDayRule: z.enum(BUSINESS_DAY_RULES).default('NONE').meta({
    description: 'A run on a Saturday, Sunday or Colombian holiday: NONE (runs then), PREVIOUS / NEXT (the business day before / after), SKIP (no run).',
  }),
  startAt: requestInstant().optional().meta({ description: 'No run before it (default: now).' }),
  endAt: requestInstant().optional().meta({ description: 'No run after it.' }),
  maxRuns: z.int().min(1).max(MAX_SCHEDULE_RUNS).optional().meta({ description: 'At most this many runs.' }),
};

export const CreateScheduleBody = z
  .strictObject({
    description: textSchema(1, 140).optional().meta({ description: 'Your name for it ("Nómina quincenal").' }),
    recurrence: RecurrenceSchema,
    ...ruleFields,
    action: ScheduleActionSchema,
  })
  .meta({ id: 'CreateScheduleRequest' });

export const UpdateScheduleBody = z
  .strictObject({
    status: z.enum(['ACTIVE', 'PAUSED']).optional().meta({ description: 'PAUSED: no runs until ACTIVE again; runs that fell due meanwhile do not happen.' }),
    description: textSchema(1, 140).optional(),
    endAt: requestInstant().nullable().optional().meta({ description: 'A new end (null: none).' }),
    maxRuns: z.int().min(1).max(MAX_SCHEDULE_RUNS).nullable().optional(),
    action: ScheduleActionSchema.optional().meta({ description: 'What the next runs do (a run already started keeps what it did).' }),
  })
  .meta({ id: 'UpdateScheduleRequest' });

const RunRefSchema = z.object({
  seq: count().min(1).meta({ description: '1 for the first run.' }),
  nominalAt: instant().meta({ description: 'The run as the recurrence names it.' }),
  dueAt: instant().meta({ description: 'When it is due: nominalAt moved by the business-day rule.' }),
});

export const ScheduleSchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    status: z.enum(['ACTIVE', 'PAUSED', 'CANCELLED', 'COMPLETED']),
    description: z.string().nullable(),
    recurrence: RecurrenceSchema,
    businessDayRule: z.enum(BUSINESS_DAY_RULES),
    startAt: instant(),
    endAt: instant().nullable(),
    maxRuns: count().nullable(),
    action: z
      .object({ kind: z.enum(['SEND', 'BATCH', 'MOVE', 'TOP_UP']) })
      .loose()
      .meta({ description: 'As it was given (ScheduleAction).' }),
    runsStarted: count(),
    nextRun: RunRefSchema.nullable().meta({ description: 'The run the scheduler starts next (null: none left, or paused).' }),
    upcomingRuns: z.array(RunRefSchema).meta({ description: 'The next runs (up to 5), as the rule names them today.' }),
    createdAt: instant(),
    updatedAt: instant(),
  })
  .meta({ id: 'Schedule' });

export const SchedulePageSchema = z.object({ items: z.array(ScheduleSchema), nextCursor: z.string().nullable() }).meta({ id: 'SchedulePage' });

export const ScheduleRunSchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    scheduleId: z.string().meta({ format: 'uuid' }),
    ...RunRefSchema.shape,
    runKey: z
      .string()
      .meta({ description: 'The idempotency key the run used downstream: schedule:<id>:<nominal time, Bogotá>.', example: 'schedule:0b7e…:2026-12-15T08:00' }),
    status: z.enum(['STARTING', 'STARTED', 'FAILED', 'SKIPPED']).meta({
      description: 'STARTING (being made), STARTED (its transfer, batch or move exists), FAILED (nothing moved: see error), SKIPPED (nothing to do).',
    }),
    amountCents: centsNumber(MAX_TRANSFER_CENTS).nullable(),
    transferId: z.string().nullable().meta({ description: 'The send it made (GET /transfers/{id}).' }),
    walletMoveId: z.string().nullable().meta({ description: 'The move it made (GET /wallets/moves/{id}).' }),
    batchId: z.string().nullable().meta({ description: 'The bulk payout it made and executed (GET /transfers/batches/{id}).' }),
    transferStatus: MovementStatusSchema.nullable().meta({ description: "The send's status as it answered at the run." }),
    batchStatus: BatchStatusSchema.nullable().meta({ description: "The batch's status as its execution answered at the run." }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    claimedAt: instant(),
    finishedAt: instant().nullable(),
  })
  .meta({ id: 'ScheduleRun' });

export const ScheduleRunPageSchema = z.object({ items: z.array(ScheduleRunSchema), nextCursor: z.string().nullable() }).meta({ id: 'ScheduleRunPage' });

const ProjectionWalletSchema = z.object({
  rail: z.enum(WALLETS),
  availableCents: centsString().meta({ description: 'Now.' }),
  outflowCents: centsString().meta({
    description: 'What the runs in the window take from it (sends before fees, moves, top-ups as computed in the projection).',
  }),
  inflowCents: centsString().meta({ description: 'What moves and top-ups bring it.' }),
  lowestBalanceCents: centsString().meta({ description: 'Its lowest projected balance in the window (may be negative).' }),
  shortfallCents: centsString().meta({ description: 'What it lacks to make every run (0: enough).' }),
  firstShortfallAt: instant().nullable().meta({ description: 'The due time of the first run it cannot cover.' }),
});

export const ScheduleProjectionSchema = z
  .object({
    from: instant(),
    until: instant(),
    wallets: z.array(ProjectionWalletSchema),
    runs: z.array(
      z.object({
        scheduleId: z.string().meta({ format: 'uuid' }),
        description: z.string().nullable(),
        ...RunRefSchema.shape,
        actionKind: z.enum(['SEND', 'BATCH', 'MOVE', 'TOP_UP']),
        rail: z.enum(WALLETS).meta({ description: 'The wallet it takes money from.' }),
        amountCents: centsString(),
        balanceAfterCents: centsString().meta({ description: 'That wallet after the run, in the projection.' }),
      }),
    ),
    warnings: z
      .array(z.string())
      .meta({ description: 'In Spanish, one per wallet short of funds ("Los pagos del viernes 4 de diciembre necesitan 12.000.000 COP más en ACH").' }),
  })
  .meta({ id: 'ScheduleProjection' });

export const SchedulesQuery = z.strictObject({
  status: z.enum(['ACTIVE', 'PAUSED', 'CANCELLED', 'COMPLETED']).optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().min(1).max(512).optional(),
});

export const ScheduleRunsQuery = z.strictObject({
  limit: queryInt(1, 100, 50),
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,5}$/)
    .optional()
    .meta({ description: "The previous page's nextCursor." }),
});

export const ProjectionQuery = z.strictObject({
  days: queryInt(1, 31, 7).meta({ description: 'How far ahead, in days (1-31, default 7).' }),
});
