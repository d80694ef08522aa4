import { z } from 'zod';
import { EXCEPTION_ACTIONS as ACTIONS, EXCEPTION_KINDS as KINDS } from '../../../app/money-exceptions.js';
import { isoDate } from '../../../http/schemas.js';
import { textSchema, queryInt } from '../../../http/validation.js';

export const MoneyExceptionSchema = z
  .object({
    id: z.string().meta({ description: '`exc_…`' }),
    kind: z.enum(KINDS),
    status: z.enum(['OPEN', 'RESOLVING', 'RESOLVED']),
    rail: z.enum(['BREB', 'ACH', 'PSE']),
    resourceId: z.string().meta({
      description:
        "The transfer (UUID), PSE deposit or inbound Bre-B payment (`dep_…`) the exception is about; for `RETURN_CLOSE_REFUSED`, the parked return (`ret_…`, its payment in `ours.depositId`); for a reconciliation break, the break's key (`<rail>:<date>:<kind>:<ref>`).",
    }),
    companyId: z.string().meta({ description: 'The company concerned; empty when the break has no record of ours (e.g. `MISSING_IN_OUR_BOOKS`).' }),
    ours: z.record(z.string(), z.unknown()).meta({ description: 'Our record when the contradiction arrived.' }),
    theirs: z.record(z.string(), z.unknown()).meta({ description: 'What the provider (or the ledger) said.' }),
    openedAt: isoDate(),
    resolvedAt: isoDate().nullable(),
    resolvedBy: z.string().nullable(),
    action: z.string().nullable(),
    note: z.string().nullable(),
    actions: z.array(z.enum(ACTIONS)).meta({ description: 'The resolutions this kind admits.' }),
    movement: z.string().nullable().meta({
      description:
        "The external movement it is about: `<rail>:our:<our id>` (payouts on `breb`/`ach`, `pse` with `:payment` or `:reversal`), `breb-inbound:<provider id>`. An owner's exception and a reconciliation break with the same movement are one case: `GET /admin/exceptions?movement=…` lists them together, and only one correcting entry is ever posted for it.",
      example: 'breb:our:2104c478-7604-4ac2-a58d-dd9136a5adcf',
    }),
  })
  .meta({ id: 'MoneyException' });

export const ExceptionQuery = z.strictObject({
  status: z.enum(['OPEN', 'RESOLVING', 'RESOLVED']).optional(),
  kind: z.enum(KINDS).optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().max(300).optional(),
  movement: z
    .string()
    .max(220)
    .regex(/^(breb|ach|pse|breb-inbound):[\x21-\x7e]+$/)
    .optional()
    .meta({
      description: "Only the exceptions about this external movement (the `movement` of an item): the owner's and the reconciliation's together.",
      example: 'breb:our:2104c478-7604-4ac2-a58d-dd9136a5adcf',
    }),
});

export const ResolveBody = z
  .strictObject({
    action: z.enum(ACTIONS).meta({
      description:
        "`write_off` (transfers): the payout the rail made after we released its funds is booked against operational losses (the company keeps its refund). `credit` (PSE): the payment is credited to the company once, as a late confirmation would have been. `retry`: run again a ledger step that was refused (e.g. once the wallet exists; for a parked return, the commit or release of its hold: refused again, the exception is OPEN again). `return` (an inbound Bre-B payment whose credit was refused): it is held, then returned to the payer through the Bre-B network. `dismiss`: no entry; the note says why. Reconciliation breaks: `accept_provider` (the provider's side is right: a correcting entry moves the difference between the rail's clearing account and reconciliation differences), `explain` (no entry; the note explains the difference), `rerun` (the break's rail and day are reconciled again now: RESOLVED if the break is gone, else 409 `BREAK_STILL_PRESENT`). Each exception lists the actions its kind admits. One case per external movement: a correcting entry is posted at most once per movement, whichever case asks (409 `MOVEMENT_ALREADY_CORRECTED` names the case that did, in `details.caseId`); `accept_provider` waits for the owner (409 `CASE_NOT_FINAL`, `details.reason` `pending` | `open_exception` | `step_owed`, with `ownerExceptionId`), and on a movement the owner's case already corrected it resolves the break as `linked` without a second entry. By a named operator, every action but `retry` and `rerun` waits for a second, independent operator (202, an approval request).",
    }),
    note: textSchema(1, 500),
  })
  .meta({ id: 'ResolveExceptionRequest' });
