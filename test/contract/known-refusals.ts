/**
 * Document-valid requests the server still refuses with 400, by operation and field path (as
 * `details.fields[].path`, array indices folded to `*`): each entry is a place where the served
 * document allows more than the server accepts. The contract fuzz test fails on a refusal not
 * listed here, so this list must only shrink: tighten the document (or loosen the server), then
 * delete the line. `npm run fuzz:contract` prints every refusal with a request that got it.
 *
 * Measured on the document of 2026-11-29 (main at c4a280a): 3,003 requests each, 85.95% (seed 1) and
 * 85.71% (seed 2) of document-valid requests accepted.
 */
export const KNOWN_REFUSALS: ReadonlyArray<string> = [
  // Instants and dates: the document has a bare string; the server wants ISO 8601 with an offset
  // (or, for statements and listings, a Bogotá date AAAA-MM-DD).
  'adminListAudit query.from',
  'adminListAudit query.to',
  'getBalanceAt query.at',
  'getStatement query.from',
  'getStatement query.to',
  'listTransactions query.from',
  'listTransactions query.to',

  // Paging: the document's maximum is above the server's (limit ≤ 100 / 200, page ≤ 1,000,000).
  'adminListPlatformWebhookDeliveries query.limit',
  'listCollectKeys query.limit',
  'listDeposits query.limit',
  'listDeposits query.page',
  'listTransactions query.limit',
  'listTransactions query.page',
  'listWebhookDeliveries query.limit',

  // "Exactly one of" and "required when" rules the document states only in prose.
  'sendTransfer destination', // exactly one of brebKey / bankAccount; destination or targetAnchorHandle
  'sendTransfer targetName', // required for BREB
  'adminAddAmlEntry documentNumber', // documentNumber or bankAccount, not both
  'adminCreateDashboardUser password', // not with invite: true
  'createBatch query.description', // query parameters only with Content-Type text/csv
  'createBatch query.mode',
  'createBatch query.reference',
  'updateWebhookEndpoint (root)', // at least one field (minProperties)
  'adminCreateCompany wallets', // no repeats (uniqueItems)

  // Patterns and formats the server checks and the document does not state.
  'createCollectKey keyValue', // @ followed by 3-40 letters or digits
  'listCollectKeys externalId', // 1-64 of A-Z a-z 0-9 . _ : -
  'sendTransfer targetAnchorHandle',
  'sendTransfer targetDocument', // 3-32 letters, digits, dots, hyphens or spaces
  'createPseDeposit payerFirstName', // not blank (the server trims; the document's minLength counts spaces)
  'createWebhookEndpoint description', // likewise
  'adminUpdateCompany rateLimitMultiplier', // at most two decimals
  'adminAddAmlEntry bankAccount.bankCode', // a bank of GET /dictionaries/banks/ach

  // Quotas answered as 400 (20 endpoints per company / for the platform): no schema can say it; a
  // business code (409/422) would tell an integrator it is not the request's shape.
  'adminCreatePlatformWebhookEndpoint url',
  'createWebhookEndpoint url',
];
