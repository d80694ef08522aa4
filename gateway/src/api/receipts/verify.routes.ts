import { z } from 'zod';
import { AppError, ERRORS } from '@wallet/platform';
import type { receiptV1 } from '@wallet/proto';
import type { ReceiptClient } from '../../clients/receipt-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { VERIFY_PAGE_HEADERS, notFoundPage, verifiedPage } from './verify-page.js';
import { ReceiptNotFoundSchema, ReceiptVerificationSchema, type ReceiptVerificationAnswer } from './verify.schemas.js';

const tone = (t: string): 'ok' | 'failed' | 'pending' => (t === 'ok' || t === 'failed' ? t : 'pending');

function verificationToApi(v: receiptV1.ReceiptVerification): ReceiptVerificationAnswer {
  const i = v.issued!;
  return {
    receiptNumber: v.receiptNumber,
    sha256: v.sha256,
    issuedAt: v.firstIssuedAt!.toISOString(),
    issued: {
      title: i.title,
      company: { name: i.companyName, nit: i.companyNit },
      statusLabel: i.statusLabel,
      tone: tone(i.tone),
      dateLabel: i.issuedFor,
      headline: { label: i.headline?.label ?? '', value: i.headline?.value ?? '' },
      total: { label: i.grandTotal?.label ?? '', value: i.grandTotal?.value ?? '' },
    },
    current: v.now ? { statusLabel: v.now.statusLabel, tone: tone(v.now.tone), sameContent: v.now.sameContent } : null,
    signers: v.signers.map((s) => ({ name: s.name, certificateSha256: s.sha256 })),
  };
}

const JSON_HEADERS = { 'Cache-Control': 'no-store', 'X-Robots-Tag': 'noindex, nofollow' };

/**
 * The public verification of a receipt: the URL its QR carries when `RECEIPT_VERIFY_BASE_URL` points
 * here (docs/receipts.md "Verifying a receipt"). A page for people (HTML, the default) and the same
 * answer as JSON for programs (`Accept: application/json`).
 */
export function receiptVerificationRoutes(receipts: ReceiptClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/receipts/verify/{receiptNumber}',
      operationId: 'verifyReceipt',
      tags: ['Receipts'],
      summary: 'Verify a receipt (public: the page its QR opens)',
      description:
        'Anyone holding a receipt can check that we issued it, with that content: its number and `h`, the first 16 hex digits of ' +
        'the SHA-256 printed on it (both in the QR). The answer shows what the receipt said (issuer, type, date, amounts, status; never ' +
        'a party account, key, document or name), the operation status now, the full hash and the signing certificate. Any number and ' +
        '`h` that name no issued receipt answer the same 404, whether the number exists or not. An HTML page unless the request prefers ' +
        '`application/json`. No credential; limited per client IP.',
      auth: { kind: 'public' },
      rateClass: 'RECEIPT_VERIFICATION',
      params: z.object({
        receiptNumber: z
          .string()
          .regex(/^(TRX|DEP)-[0-9A-HJKMNP-TV-Z]{10}$/i)
          .meta({ description: 'The receipt number printed on it (`TRX-` or `DEP-` and 10 Crockford base-32 characters).', example: 'TRX-VWV7P8RK7F' }),
      }),
      query: z.object({
        h: z
          .string()
          .regex(/^[0-9a-fA-F]{16}$/)
          .meta({ description: 'The first 16 hex digits of the receipt content SHA-256 (as in the QR).', example: 'cd42d10fbf12b631' }),
      }),
      responses: {
        200: { description: 'Issued by us with this content.', schema: ReceiptVerificationSchema, contentType: 'text/html' },
        404: {
          description: `RECEIPT_NOT_FOUND (the same for every pair that names no issued receipt): ${ERRORS.RECEIPT_NOT_FOUND.message}`,
          schema: ReceiptNotFoundSchema,
          contentType: 'text/html',
        },
      },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ params, query, call, ctx }) => {
        const html = ctx.accepts('html', 'json') !== 'json';
        try {
          const v = verificationToApi(await receipts.verifyReceipt({ receiptNumber: params.receiptNumber, hashPrefix: query.h }, call));
          return html ? { status: 200, body: verifiedPage(v), headers: VERIFY_PAGE_HEADERS } : { status: 200, body: v, headers: JSON_HEADERS };
        } catch (err) {
          if (!(err instanceof AppError) || err.code !== 'RECEIPT_NOT_FOUND') throw err;
          const message = ERRORS.RECEIPT_NOT_FOUND.message;
          return html
            ? { status: 404, body: notFoundPage(message), headers: VERIFY_PAGE_HEADERS }
            : { status: 404, body: { error: 'RECEIPT_NOT_FOUND', message }, headers: JSON_HEADERS };
        }
      },
    }),
  ];
}
