import { z } from 'zod';
import type { receiptV1 } from '@wallet/proto';
import type { ReceiptClient } from '../../clients/receipt-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { uuidSchema } from '../../http/validation.js';

const pdfAnswer = (r: receiptV1.ReceiptPdf) => ({
  status: 200,
  body: Buffer.from(r.pdf),
  headers: {
    'Content-Type': 'application/pdf',
    // The file name comes from the receipt number (letters, digits, dashes); quoted anyway.
    'Content-Disposition': `inline; filename="${r.filename.replace(/[^A-Za-z0-9._-]/g, '')}"`,
    'Cache-Control': 'private, no-store',
    'X-Receipt-Number': r.receiptNumber,
    'X-Receipt-Sha256': r.sha256,
  },
});

const pdfDoc = {
  description:
    'A one-page PDF receipt (es-CO amounts, America/Bogota times, account masked, a verification QR and SHA-256), digitally signed ' +
    '(PAdES, ETSI.CAdES.detached): any PDF reader, or `pdfsig`, shows whether it was changed after it was issued (docs/receipts.md).',
  contentType: 'application/pdf',
  headers: {
    'Content-Disposition': { description: '`inline; filename="comprobante-<receipt number>.pdf"`', schema: { type: 'string' } },
    'X-Receipt-Sha256': { description: 'SHA-256 of the receipt content, also printed on it.', schema: { type: 'string' } },
  },
};

export function receiptRoutes(receipts: ReceiptClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/wallets/transactions/{id}/receipt.pdf',
      operationId: 'getTransactionReceipt',
      tags: ['Receipts'],
      summary: 'PDF receipt of a transaction',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: uuidSchema() }),
      paramErrors: { id: 'TRANSACTION_NOT_FOUND' },
      responses: { 200: pdfDoc },
      errors: ['TRANSACTION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      // The company's name and NIT travel in the signed caller context (callContext), not here.
      handler: async ({ params, call }) => pdfAnswer(await receipts.getTransactionReceipt({ id: params.id }, call)),
    }),
    defineRoute({
      method: 'GET',
      path: '/wallets/deposits/{id}/receipt.pdf',
      operationId: 'getDepositReceipt',
      tags: ['Receipts'],
      summary: 'PDF receipt of a deposit',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: z.object({ id: z.string().regex(/^dep_[a-z0-9]{8,64}$/) }),
      paramErrors: { id: 'DEPOSIT_NOT_FOUND' },
      responses: { 200: pdfDoc },
      errors: ['DEPOSIT_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => pdfAnswer(await receipts.getDepositReceipt({ id: params.id }, call)),
    }),
  ];
}
