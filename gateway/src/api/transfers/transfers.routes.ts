import { ledgerV1 } from '@wallet/proto';
import { quoteToApi, requestHash, resolveResultToApi, transferToApi, sendRequestOf } from './presenters.js';
import type { TransferClient } from '../../clients/transfer-client.js';
import {
  PendingApprovalTransferSchema,
  QuoteSchema,
  ResolveKeyNotFoundSchema,
  ResolveKeyResultSchema,
  TransferSchema,
  ResolveKeyBody,
  QuoteBody,
  AchQuoteBody,
  SendBody,
} from './schemas.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../../http/idempotency-key.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';

export function transferRoutes(transfers: TransferClient, settings: { sendDeadlineMs: number } = { sendDeadlineMs: 20_000 }): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/transfers/resolve-key',
      operationId: 'resolveKey',
      tags: ['Transfers'],
      summary: 'Resolve a Bre-B key to its registered holder',
      description:
        'Consulting only; never cached (`Cache-Control: no-store`). Not found, inactive or malformed keys answer 422 `{ found: false, error, message }`.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'RESOLVE_KEY',
      body: ResolveKeyBody,
      responses: {
        200: { description: 'The key and its holder.', schema: ResolveKeyResultSchema },
        422: { description: 'Not found, inactive or malformed key.', schema: ResolveKeyNotFoundSchema },
      },
      errors: ['BREB_DIRECTORY_LOOKUP_FAILED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const r = await transfers.resolveKey({ keyValue: body.keyValue, keyType: body.keyType }, call);
        if (!r.found) return { status: 422, body: { found: false, error: r.errorCode, message: r.message } };
        return { status: 200, body: resolveResultToApi(r) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/transfers/quote',
      operationId: 'quoteBreb',
      tags: ['Transfers'],
      summary: 'Quote a BREB send: fee, IVA and total debit (reserves nothing)',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'QUOTES',
      body: QuoteBody,
      responses: { 200: { description: 'The fee quote (§2.3) on the BREB wallet.', schema: QuoteSchema } },
      errors: ['AMOUNT_EXCEEDS_BREB_CAP', 'INVALID_KEY', 'COUNTERPARTY_NOT_FOUND', 'WALLET_NOT_PROVISIONED', 'FAST_WALLET_MISSING', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const q = await transfers.quote(
          {
            rail: ledgerV1.Rail.BREB,
            amount: BigInt(body.amount),
            keyValue: body.keyValue,
            keyType: body.keyType,
            counterpartyId: body.counterpartyId,
          },
          call,
        );
        return { status: 200, body: quoteToApi(q) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/transfers/quote/ach',
      operationId: 'quoteAch',
      tags: ['Transfers'],
      summary: 'Quote an ACH send: fee, IVA and total debit (reserves nothing)',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'QUOTES',
      body: AchQuoteBody,
      responses: { 200: { description: 'The fee quote (§2.3) on the ACH wallet.', schema: QuoteSchema } },
      errors: ['AMOUNT_EXCEEDS_ACH_CAP', 'COUNTERPARTY_NOT_FOUND', 'WALLET_NOT_PROVISIONED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => {
        const q = await transfers.quote({ rail: ledgerV1.Rail.ACH, amount: BigInt(body.amount), counterpartyId: body.counterpartyId }, call);
        return { status: 200, body: quoteToApi(q) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/transfers/send',
      operationId: 'sendTransfer',
      tags: ['Transfers'],
      summary: 'Send to a Bre-B key (BREB wallet), a bank account (ACH wallet) or a counterparty',
      description:
        'Funds are reserved and the transfer dispatched to the rail; it answers 201 PENDING and later becomes COMPLETED or FAILED ' +
        '(poll GET /wallets/transactions/{id}). `reference` makes the request idempotent for 60 s: the same body returns the original ' +
        'transfer (same status code), a different body is 409 REFERENCE_CONFLICT.\n\n' +
        '**Idempotency-Key on a send** is bound to the transfer it creates, in the transfer service, for good: when the outcome of a ' +
        'send is unknown (a 5xx or a time-out after the send may have been accepted, a connection lost), retry with the same key and ' +
        'body — at once, with no 409 `IDEMPOTENCY_KEY_IN_USE` wait: the answer is that transfer in its current state, same status ' +
        'code and shape as a first send (201, or 200 for `AWAITING_APPROVAL`), with `Idempotent-Replayed: true`; never a second ' +
        'transfer. The key stays bound to that body (another body → 409 `IDEMPOTENCY_KEY_REUSED`). A send refused before it was ' +
        'recorded (e.g. 503 `ACH_RAIL_UNAVAILABLE`) made no transfer: the retry runs it. While the first send is still being decided the ' +
        'retry waits for it (up to 15 s, then 503 again).\n\n' +
        '**Counterparties and the approval policy** (docs/policies.md): `counterpartyId` names one of your counterparties instead of a ' +
        "destination (its key or account, holder and document are used; another company's → 404 `COUNTERPARTY_NOT_FOUND`). The " +
        "company's approval policy (GET /approval-policy) decides every send; the answer's `policyDecision` says which version and rule " +
        'decided and what: ALLOW (201), REQUIRE_APPROVALS (200 `AWAITING_APPROVAL`, `threshold` signatures from `approvalRoles`) or ' +
        "REFUSE: 422 `POLICY_REFUSED` with `details: { policyVersion, ruleId, code, message? }` (the rule, and the company's own code " +
        "and message; `ruleId` null when the policy's `otherwise` refused), nothing reserved.",
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      idempotent: 'bound',
      body: SendBody,
      responses: {
        201: { description: 'The transfer, PENDING.', schema: TransferSchema },
        200: {
          description:
            'Multi-signature company (threshold ≥ 2) or an approval policy asking for approvals: the funds are reserved and the transfer awaits approval (`AWAITING_APPROVAL`, ' +
            '`approvalId`, `threshold`, `approvalRoles`, `expiresAt`, `amount`, `rail`, plus the §2.5 fields). Nothing is dispatched until dashboard users sign it. ' +
            'A replay of a multi-signature send answers 200 with its current state.',
          schema: PendingApprovalTransferSchema,
        },
      },
      errors: [
        'AMOUNT_EXCEEDS_BREB_CAP',
        'AMOUNT_EXCEEDS_ACH_CAP',
        'TARGET_DOCUMENT_REQUIRED',
        'RECIPIENT_BLACKLISTED',
        'INVALID_KEY',
        'KEY_INACTIVE',
        'NAME_MISMATCH',
        'INVALID_BANK_ACCOUNT',
        'DESTINATION_REJECTED',
        'COUNTERPARTY_DAILY_LIMIT_EXCEEDED',
        'COUNTERPARTY_MONTHLY_LIMIT_EXCEEDED',
        'INSUFFICIENT_BALANCE',
        'REFERENCE_CONFLICT',
        'COUNTERPARTY_NOT_FOUND',
        'POLICY_REFUSED',
        'WALLET_NOT_PROVISIONED',
        'FAST_WALLET_MISSING',
        'BREB_DIRECTORY_LOOKUP_FAILED',
        'ACH_RAIL_UNAVAILABLE',
        'SERVICE_UNAVAILABLE',
      ],
      handler: async ({ body, call, idempotencyKey }) => {
        const res = await transfers.send(
          {
            ...sendRequestOf(body),
            requestHash: requestHash(body),
            // The transfer service binds the key to the transfer it creates: a retry gets that transfer.
            idempotencyKey,
          },
          call,
          { deadlineMs: settings.sendDeadlineMs },
        );
        const out = transferToApi(res.transfer!);
        // The transfer already held the key (an earlier request of which this is a retry): a replay.
        return { status: out.status, body: out.body, ...(res.idempotencyKeyReplayed ? { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } : {}) };
      },
    }),
  ];
}
