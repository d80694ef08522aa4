import { z } from 'zod';
import { ledgerV1 } from '@wallet/proto';
import type { TransferClient } from '../../clients/transfer-client.js';
import type { DepositClient } from '../../clients/deposit-client.js';
import type { CollectKeyClient } from '../../clients/collect-key-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';

/**
 * What the rails post (docs/sandbox.md): a transfer's outcome, many transfers' outcomes
 * (`type: "rail.outcomes"`), or (ACH) a prenote's outcome (`type: "ach.prenote"`). Validated loosely here, the transfer service owns the meaning.
 */
const RailTransferCallback = z
  .object({
    eventId: z.string().min(1).max(200),
    transactionId: z.string().min(1).max(200),
  })
  .passthrough()
  .meta({ id: 'RailTransferCallback', description: "A transfer's outcome." });

const RailCallbackBody = z
  .union([
    RailTransferCallback,
    z
      .object({
        type: z.literal('rail.outcomes'),
        outcomes: z.array(RailTransferCallback).min(1).max(1000),
      })
      .passthrough()
      .meta({
        id: 'RailTransferOutcomes',
        description: 'Many transfers\' outcomes in one notification (docs/sandbox.md "Bulk outcomes"), each as it would come alone.',
      }),
    z
      .object({
        eventId: z.string().min(1).max(200),
        type: z.literal('ach.prenote'),
        prenoteId: z.string().min(1).max(200),
      })
      .passthrough()
      .meta({ id: 'AchPrenoteCallback', description: "An ACH prenote's outcome (a counterparty's verification, docs/counterparties.md)." }),
  ])
  .meta({ id: 'RailCallback' });

const RAILS = { breb: ledgerV1.Rail.BREB, ach: ledgerV1.Rail.ACH } as const;

/**
 * Provider callbacks reach the product through the gateway, the only public edge. The body's
 * exact bytes and the signature header go to the transfer service, which verifies the HMAC.
 */
const PseCallbackBody = z
  .object({
    eventId: z.string().min(1).max(200),
    depositId: z.string().min(1).max(200),
  })
  .passthrough()
  .meta({ id: 'PseCallback' });

const BrebIncomingBody = z
  .object({
    eventId: z.string().min(1).max(200),
    providerTransferId: z.string().min(1).max(200),
    anchorHandle: z.string().min(1).max(100).optional().meta({
      description:
        'The directory registration the network routed the payment to when it was paid: the payment is attributed to the key of that registration, never to whoever holds the value when the notification arrives.',
    }),
  })
  .passthrough()
  .meta({ id: 'BrebIncomingPayment' });

export function webhookRoutes(transfers: TransferClient, deposits: DepositClient, collectKeys: CollectKeyClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/webhooks/rails/{rail}',
      operationId: 'railCallback',
      tags: ['Provider webhooks'],
      summary: 'Outcome notification from a payment rail (signed)',
      description:
        'For the Bre-B and ACH rail providers, not for API clients. Header `X-Provider-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`; ' +
        'a bad signature or a timestamp more than 300 s off answers 401 INVALID_SIGNATURE. Duplicates are acknowledged and change nothing. ' +
        'A page of outcomes (`type: "rail.outcomes"`, up to 1,000) is answered 200 once every outcome in it is recorded; a malformed page is refused whole (400).',
      auth: { kind: 'public' },
      signedBy: 'provider',
      params: z.object({ rail: z.enum(['breb', 'ach']) }),
      body: RailCallbackBody,
      rawBody: true,
      responses: { 200: { description: 'Received.', schema: z.object({ received: z.literal(true), duplicate: z.boolean() }) } },
      errors: ['INVALID_SIGNATURE', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, rawBody, ctx, call }) => {
        const signature = String(ctx.get('x-provider-signature') ?? '');
        const r = await transfers.handleRailCallback({ rail: RAILS[params.rail], rawBody: rawBody ?? Buffer.alloc(0), signature }, call);
        return { status: 200, body: { received: true, duplicate: r.duplicate } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/webhooks/pse',
      operationId: 'pseCallback',
      tags: ['Provider webhooks'],
      summary: 'Payment outcome notification from the PSE gateway (signed)',
      description: 'For the PSE provider, not for API clients. Same signature scheme as the rails; duplicates and late notifications change nothing.',
      auth: { kind: 'public' },
      signedBy: 'provider',
      body: PseCallbackBody,
      rawBody: true,
      responses: { 200: { description: 'Received.', schema: z.object({ received: z.literal(true), duplicate: z.boolean() }) } },
      errors: ['INVALID_SIGNATURE', 'SERVICE_UNAVAILABLE'],
      handler: async ({ rawBody, ctx, call }) => {
        const signature = String(ctx.get('x-provider-signature') ?? '');
        const r = await deposits.handlePseCallback({ rawBody: rawBody ?? Buffer.alloc(0), signature }, call);
        return { status: 200, body: { received: true, duplicate: r.duplicate } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/webhooks/breb/incoming',
      operationId: 'brebIncomingPayment',
      tags: ['Provider webhooks'],
      summary: 'Inbound Bre-B payment to a collect key, from the network (signed)',
      description:
        'For the Bre-B network, not for API clients. Same signature scheme as the rails; a repeated notification credits once. A payment whose credit the ledger refuses for good (e.g. the company has no BREB wallet) is acknowledged and kept for an operator (money exception `CREDIT_REFUSED`).',
      auth: { kind: 'public' },
      signedBy: 'provider',
      body: BrebIncomingBody,
      rawBody: true,
      responses: { 200: { description: 'Received.', schema: z.object({ received: z.literal(true), duplicate: z.boolean() }) } },
      errors: ['INVALID_SIGNATURE', 'SERVICE_UNAVAILABLE'],
      handler: async ({ rawBody, ctx, call }) => {
        const signature = String(ctx.get('x-provider-signature') ?? '');
        const r = await collectKeys.handleIncomingPayment({ rawBody: rawBody ?? Buffer.alloc(0), signature }, call);
        return { status: 200, body: { received: true, duplicate: r.duplicate } };
      },
    }),
  ];
}
