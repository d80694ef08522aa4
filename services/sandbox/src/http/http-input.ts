import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { ProviderError } from '../app/errors.js';

/** Request bodies and validation: bad input answers 400 INVALID_REQUEST with the fields at fault. */

const MAX_BODY_BYTES = 256 * 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const spanish = z.locales.es().localeError;

export function invalidRequest(fields: Array<{ path: string; message: string }>, message = 'La solicitud no es válida.'): ProviderError {
  return new ProviderError(400, 'INVALID_REQUEST', message, { fields });
}

/** Reads a JSON body (an empty body reads as undefined); 415 for another type, 413 when too large. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ProviderError(413, 'PAYLOAD_TOO_LARGE', 'El cuerpo supera 256 KiB.');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) {
    throw new ProviderError(415, 'UNSUPPORTED_MEDIA_TYPE', 'El cuerpo debe ser application/json.');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidRequest([{ path: '', message: 'El cuerpo no es JSON válido.' }]);
  }
}

export function parse<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.output<S> {
  const r = schema.safeParse(input, { error: spanish });
  if (r.success) return r.data;
  const fields: Array<{ path: string; message: string }> = [];
  for (const issue of r.error.issues) {
    const base = [prefix, ...issue.path.map(String)].filter(Boolean);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) fields.push({ path: [...base, key].join('.'), message: 'Campo no permitido.' });
    } else {
      fields.push({ path: base.join('.'), message: issue.message });
    }
  }
  throw invalidRequest(fields);
}

// ---- Field schemas ---------------------------------------------------------------------------

export const transactionIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'Solo letras, dígitos y . _ : -');
/** A JSON integer of centavos, 1 … 2^53-1 (no strings, no fractions). */
export const amountCentsSchema = z
  .int()
  .min(1)
  .max(Number.MAX_SAFE_INTEGER)
  .transform((n) => BigInt(n));
export const callbackUrlSchema = z.url({ protocol: /^https?$/ }).max(2048);
export const text = (max: number) => z.string().trim().min(1).max(max);
/** A code sent as a JSON number or a numeric string (providers' files carry both). */
const code = <T extends number>(allowed: readonly T[]) =>
  z
    .union([z.int(), z.string().regex(/^\d+$/).transform(Number)])
    .refine((n): n is T => (allowed as readonly number[]).includes(n), { message: `Debe ser uno de ${allowed.join(', ')}.` })
    .transform((n) => n as T);

/** The destination account of an ACH operation (CONTRACT: 20 Ahorros, 21 Corriente, 22 Depósito electrónico; 1 CC, 4 CE, 5 Pasaporte, 8 NIT). */
export const achAccountShape = {
  bankCode: z.union([z.string().regex(/^\d{1,10}$/), z.int().min(0)]).transform(String),
  accountTypeId: code([20, 21, 22] as const),
  accountNumber: z.string().regex(/^\d{4,32}$/, 'Entre 4 y 32 dígitos.'),
  documentTypeId: code([1, 4, 5, 8] as const),
  documentNumber: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9-]{3,20}$/, 'Entre 3 y 20 letras o dígitos.'),
  holderName: text(150),
};

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;
const MAX_FORM_BYTES = 16 * 1024;

/** Reads an HTML form body (application/x-www-form-urlencoded, at most 16 KiB); 415 for another type. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new ProviderError(413, 'PAYLOAD_TOO_LARGE', 'El formulario supera 16 KiB.');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text !== '' && !FORM_TYPE.test(req.headers['content-type'] ?? '')) {
    throw new ProviderError(415, 'UNSUPPORTED_MEDIA_TYPE', 'El cuerpo debe ser application/x-www-form-urlencoded.');
  }
  return new URLSearchParams(text);
}
