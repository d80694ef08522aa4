/**
 * Document-valid requests the server still refuses with 400, by operation and field path (as
 * `details.fields[].path`, array indices folded to `*`): each entry is a rule the served document
 * cannot state in JSON Schema, or a 400 the reference itself gives for a business reason. The contract
 * fuzz test fails on a refusal not listed here, so this list must only shrink: tighten the document (or
 * loosen the server), then delete the line. `npm run fuzz:contract` prints every refusal with a
 * request that got it.
 *
 * What the document now states and so left this list: instants and dates (format + pattern), paging
 * bounds (integers with the server's maximum), the send's variants (oneOf), the AML entry's variants and
 * its bank codes (enum), the collect key's `@`, patterns of listing filters and anchor handles, blank
 * texts (`\S`), at least one field to change (minProperties), wallets without repeats (uniqueItems),
 * two decimals (multipleOf 0.01), the CSV batch's envelope (its own operation, createBatchCsv), the
 * endpoint quota (409 WEBHOOK_ENDPOINT_LIMIT_REACHED, a business answer).
 */
export const KNOWN_REFUSALS: ReadonlyArray<string> = [
  // One field against another, or against the clock: JSON Schema cannot compare values.
  'adminListAudit query.from', // not after `to`
  'adminListAudit query.to',
  'getStatement query.from', // not after `to`, at most the statement's longest period, not in the future
  'getStatement query.to',
  'listTransactions query.from', // not after `to`
  'listTransactions query.to',
  'sendTransfer targetDocument', // ACH: when given, the account's own document (destination.bankAccount.documentNumber)
  'createSchedule action.send.targetDocument', // the same rule, for a scheduled send
  'updateSchedule action.send.targetDocument',
  'createSchedule action.batch.items.*.targetDocument', // the same rule, for each item of a scheduled bulk payout
  'updateSchedule action.batch.items.*.targetDocument',
  'createCobro expiresAt', // at least a minute ahead (COBRO_MIN_TTL_SECONDS), at most a year
  'createCobro maxAmountCents', // not below minAmountCents
  'setWalletBalanceAlert highThresholdCents', // above lowThresholdCents + hysteresisCents
  'createSchedule endAt', // not before the start, and the rule must name a run between them (or executeAt in the future)
  'createSchedule recurrence.executeAt', // in the future
  'createSchedule recurrence', // names a run between its start and its end (a cron for 30 February names none)
  'createSchedule recurrence.expression', // a cron the parser takes (fields in range)
  'updateSchedule endAt', // not before the start; the schedule must have a run left, or have run
  'updateSchedule maxRuns', // not below the runs already started

  // Depends on the installation and the caller: an invitation (always in production, always for a
  // named operator) takes no password; the document cannot know which enrolment is configured.
  'adminCreateDashboardUser password',

  // A 400 the reference gives on purpose (§7.3): the bank or account is rejected by internal rules
  // (a bank that cannot be routed, a placeholder account number).
  'sendTransfer (DESTINATION_REJECTED, no fields)',

  // An id of GET /dictionaries/banks/ach: the document bounds `bankId` (the send's schema, shared) but
  // does not list the dictionary's ids. Met once the approval policy's operations shifted the seeded draws.
  'createCounterparty bankAccount.bankId',
  // The same dictionary id on the counterparty's update; met once the exception approvals shifted the seeded draws.
  'updateCounterparty bankAccount.bankId',
];
