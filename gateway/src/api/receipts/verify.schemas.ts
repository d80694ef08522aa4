import { z } from 'zod';

const line = z.object({ label: z.string(), value: z.string() });

/** The JSON answer of GET /receipts/verify/{receiptNumber} (what the page shows). */
export const ReceiptVerificationSchema = z
  .object({
    receiptNumber: z.string().meta({ example: 'TRX-VWV7P8RK7F' }),
    sha256: z.string().meta({ description: 'The SHA-256 of the receipt content, as printed on it (64 lowercase hex).' }),
    issuedAt: z.string().meta({ format: 'date-time', description: 'When a receipt with this content was first issued.' }),
    issued: z
      .object({
        title: z.string(),
        company: z.object({ name: z.string(), nit: z.string() }).meta({ description: 'The company the receipt was issued for.' }),
        statusLabel: z.string().meta({ description: 'The status printed on the receipt, as printed (Spanish).' }),
        tone: z.enum(['ok', 'failed', 'pending']),
        dateLabel: z.string().meta({ description: 'The date printed on the receipt, as printed (es-CO, Bogotá time).' }),
        headline: line,
        total: line,
      })
      .meta({ description: 'What the receipt said when it was issued. Never a party account, key, document or name.' }),
    current: z
      .object({
        statusLabel: z.string().meta({ description: 'The operation status now (Spanish label, as a receipt made now prints it).' }),
        tone: z.enum(['ok', 'failed', 'pending']),
        sameContent: z.boolean().meta({ description: 'A receipt made now would carry the same hash (false: the operation moved on).' }),
      })
      .nullable()
      .meta({ description: 'The operation now; null while it cannot be read (the receipt service rebuilding its records).' }),
    signers: z
      .array(z.object({ name: z.string(), certificateSha256: z.string().meta({ description: 'SHA-256 fingerprint, `AA:BB:…`.' }) }))
      .meta({ description: 'The certificates this content was signed with (more than one only if the key changed between downloads).' }),
  })
  .meta({ id: 'ReceiptVerification' });

export type ReceiptVerificationAnswer = z.infer<typeof ReceiptVerificationSchema>;

export const ReceiptNotFoundSchema = z
  .object({ error: z.enum(['RECEIPT_NOT_FOUND']), message: z.string() })
  .meta({ id: 'ReceiptNotFound', description: 'No receipt was issued with this number and hash.' });
